#include "cli/index_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/tfrecord_format.h"

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

int IndexTfRecordFiles(const std::vector<std::string>& files, const std::string& out_dir, std::ostream& out) {
  if (!out_dir.empty()) fs::create_directories(out_dir);
  int64_t total_bytes = 0, total_records = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& file : files) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::unique_ptr<ops::ByteSource> source = ops::OpenByteSource(file);
    const std::vector<ops::TfRecordSpan> spans = ops::ScanTfRecords(*source);
    const double seconds = SecondsSince(t0);
    const std::string index = IndexPathOf(file, out_dir);
    WriteWhole(index, ops::FormatTfRecordIndex(spans));
    const double mb = static_cast<double>(source->Size()) / 1e6;
    char line[160];
    std::snprintf(line, sizeof(line), ": %zu records, %.1f MB scanned in %.3f s (%.0f MB/s) -> ", spans.size(), mb,
                  seconds, mb / seconds);
    out << file << line << index << "\n";
    total_bytes += source->Size();
    total_records += static_cast<int64_t>(spans.size());
  }
  const double mb = static_cast<double>(total_bytes) / 1e6, seconds = SecondsSince(start);
  char line[160];
  std::snprintf(line, sizeof(line), "%zu files, %lld records, %.1f MB indexed in %.2f s (%.0f MB/s)\n", files.size(),
                static_cast<long long>(total_records), mb, seconds, mb / seconds);
  out << line;
  return 0;
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
