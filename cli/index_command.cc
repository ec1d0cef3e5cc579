#include "cli/index_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/tfrecord_format.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"

namespace conveyor::cli {
namespace {

namespace fs = std::filesystem;

using Indexer = int (*)(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out);

struct IndexFormat {
  const char* name;
  const char* help;
  Indexer run;
};

// One row per format `conveyor index` writes indexes for.
const IndexFormat kIndexFormats[] = {
    {"tfrecord", "TFRecord files: DALI's tfrecord2idx index (\"offset size\" per record), <file>.idx",
     &IndexTfRecordFiles},
    {"webdataset", "WebDataset tar shards: DALI's wds2idx index (v1.2, a line per sample), <shard>.idx",
     &IndexWebDatasetShards},
};

// <out_dir or the file's folder>/<file name>.idx (a URL's query string left out).
std::string IndexPathOf(const std::string& file, const std::string& out_dir) {
  std::string name = file.substr(file.find_last_of('/') + 1);
  if (ops::IsUrl(file)) name = name.substr(0, name.find('?'));
  name += ".idx";
  if (!out_dir.empty()) return (fs::path(out_dir) / name).string();
  if (ops::IsUrl(file)) throw InvalidArgument("\"" + file + "\": a URL's index needs a folder to go to: give -o DIR");
  return (fs::path(file).parent_path() / name).string();
}

void WriteWhole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary);
    file << text;
    if (!file.good()) throw InvalidArgument("\"" + path + "\": cannot write the index");
  }
  fs::rename(tmp, path);  // a reader never sees half an index
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1e-9);
}

}  // namespace

namespace {

struct Indexed {
  std::string text;     // the index file's contents
  std::string summary;  // "25 records" for the file's line
  int64_t count = 0;    // records or samples, for the total
};

// The loop every format shares: index each file (timed), write it whole, one line per file and a
// total ("2 files, 50 records, ...").
int IndexEach(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out,
              const char* files_noun, const char* count_noun,
              const std::function<Indexed(const ops::ByteSource&, const std::string&)>& index_one) {
  if (!out_dir.empty()) fs::create_directories(out_dir);
  int64_t total_bytes = 0, total_count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& file : files) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::unique_ptr<ops::ByteSource> source = ops::OpenByteSource(file);
    const Indexed indexed = index_one(*source, file);
    const double seconds = SecondsSince(t0);
    const std::string index = IndexPathOf(file, out_dir);
    WriteWhole(index, indexed.text);
    const double mb = static_cast<double>(source->Size()) / 1e6;
    char line[160];
    std::snprintf(line, sizeof(line), ", %.1f MB scanned in %.3f s (%.0f MB/s) -> ", mb, seconds, mb / seconds);
    out << file << ": " << indexed.summary << line << index << "\n";
    total_bytes += source->Size();
    total_count += indexed.count;
  }
  const double mb = static_cast<double>(total_bytes) / 1e6, seconds = SecondsSince(start);
  char line[200];
  std::snprintf(line, sizeof(line), "%zu %s, %lld %s, %.1f MB indexed in %.2f s (%.0f MB/s)\n", files.size(),
                files_noun, static_cast<long long>(total_count), count_noun, mb, seconds, mb / seconds);
  out << line;
  return 0;
}

}  // namespace

int IndexTfRecordFiles(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out) {
  return IndexEach(files, out_dir, out, "files", "records", [](const ops::ByteSource& source, const std::string&) {
    const std::vector<ops::TfRecordSpan> spans = ops::ScanTfRecords(source);
    return Indexed{ops::FormatTfRecordIndex(spans), std::to_string(spans.size()) + " records",
                   static_cast<int64_t>(spans.size())};
  });
}

int IndexWebDatasetShards(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out) {
  return IndexEach(files, out_dir, out, "shards", "samples", [](const ops::ByteSource& source, const std::string& file) {
    const std::vector<ops::TarMember> members = ops::ScanTar(source);
    const std::vector<ops::ShardSample> samples = ops::GroupMembers(members);
    if (samples.empty()) throw InvalidArgument("shard \"" + file + "\": no members to index");
    return Indexed{ops::FormatWdsIndex(samples, file),
                   std::to_string(samples.size()) + " samples of " + std::to_string(members.size()) + " members",
                   static_cast<int64_t>(samples.size())};
  });
}

IndexCommand::IndexCommand(CLI::App& app) {
  index_ = app.add_subcommand("index", "Write the index files of existing data files (readers' index_path)");
  index_->require_subcommand(1);
  for (const IndexFormat& format : kIndexFormats) {
    CLI::App* sub = index_->add_subcommand(format.name, format.help);
    sub->add_option("files", files_, "Files (paths or URLs)")->required();
    sub->add_option("-o,--out", out_dir_, "Folder for the index files (default: each file's folder)");
    formats_.push_back(sub);
  }
}

int IndexCommand::Run(std::ostream& out) const {
  for (size_t f = 0; f < formats_.size(); ++f) {
    if (*formats_[f]) return kIndexFormats[f].run(files_, out_dir_, out);
  }
  return 2;  // unreachable: require_subcommand(1)
}

}  // namespace conveyor::cli
