#include "cli/shards_command.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>

#include "cli/index_command.h"
#include "cli/progress.h"
#include "core/error.h"
#include "operators/common/image_formats.h"
#include "operators/readers/dataset.h"
#include "operators/readers/tfrecord/tfrecord_writer.h"
#include "operators/readers/webdataset/webdataset_writer.h"

namespace conveyor::cli {
namespace {

namespace fs = std::filesystem;

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument(Quote(path) + ": cannot read: " + std::strerror(errno));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InvalidArgument(Quote(path) + ": read failed: " + std::strerror(errno));
  return data;
}

// The member extension of a file in a tar shard: its own, lowercased ("A.JPG" → "jpg").
std::string MemberExt(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  if (ext.size() <= 1) return "bin";
  ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// One shard file of a format: a sample is encoded first (its size decides whether it still fits
// the open shard), then appended.
class ShardSink {
 public:
  virtual ~ShardSink() = default;
  virtual const char* suffix() const = 0;
  // Encodes sample `key` and returns the bytes it adds to a shard.
  virtual int64_t Encode(const std::string& key, const std::string& path, const std::string& data, int32_t label) = 0;
  virtual void Open(const std::string& path) = 0;
  virtual void Append() = 0;    // the sample last encoded
  virtual void Close() = 0;     // renames the shard and its index into place
  virtual int64_t empty_bytes() const = 0;  // an empty shard's size
};

class TarSink final : public ShardSink {
 public:
  const char* suffix() const override { return ".tar"; }
  int64_t Encode(const std::string& key, const std::string& path, const std::string& data, int32_t label) override {
    key_ = key;
    ext_ = MemberExt(path);
    data_ = &data;
    label_ = std::to_string(label);
    const int64_t sizes[] = {static_cast<int64_t>(data.size()), static_cast<int64_t>(label_.size())};
    return ops::WebDatasetWriter::SampleBytes(sizes);
  }
  void Open(const std::string& path) override { writer_.emplace(path); }
  void Append() override {
    const auto* bytes = reinterpret_cast<const uint8_t*>(data_->data());
    writer_->Write(key_, {{ext_, {bytes, data_->size()}},
                          {"cls", {reinterpret_cast<const uint8_t*>(label_.data()), label_.size()}}});
  }
  void Close() override {
    writer_->Close();
    writer_.reset();
  }
  int64_t empty_bytes() const override { return ops::WebDatasetWriter::kEndBytes; }

 private:
  std::optional<ops::WebDatasetWriter> writer_;
  std::string key_, ext_, label_;
  const std::string* data_ = nullptr;
};

class TfRecordSink final : public ShardSink {
 public:
  const char* suffix() const override { return ".tfrecord"; }
  int64_t Encode(const std::string&, const std::string&, const std::string& data, int32_t label) override {
    record_ = ops::TfRecordWriter::SerializeExample(
        {{ops::ExampleFeature::kBytes, "image/encoded", {data}, {}, {}},
         {ops::ExampleFeature::kInt64, "image/class/label", {}, {label}, {}}});
    return static_cast<int64_t>(record_.size()) + 16;  // length, its CRC, data, its CRC
  }
  void Open(const std::string& path) override { writer_.emplace(path); }
  void Append() override {
    writer_->WriteRecord({reinterpret_cast<const uint8_t*>(record_.data()), record_.size()});
  }
  void Close() override {
    writer_->Close();
    writer_.reset();
  }
  int64_t empty_bytes() const override { return 0; }

 private:
  std::optional<ops::TfRecordWriter> writer_;
  std::string record_;
};

std::unique_ptr<ShardSink> MakeSink(const std::string& format) {
  if (format == "webdataset") return std::make_unique<TarSink>();
  if (format == "tfrecord") return std::make_unique<TfRecordSink>();
  throw InvalidArgument("--format: expected webdataset or tfrecord, got " + Quote(format));
}

ops::Dataset ListSamples(const ShardsOptions& options) {
  if (options.file_root.empty() == options.file_list.empty()) {
    throw InvalidArgument("expected one input, --file-root DIR or --file-list FILE, got " +
                          std::string(options.file_root.empty() ? "neither" : "both"));
  }
  if (!options.file_list.empty()) return ops::ParseFileList(options.file_list, "--file-list");
  return ops::ListFileRoot(options.file_root, ops::DecodableImageFilters(), /*class_folders=*/true, "--file-root");
}

// A Fisher-Yates permutation from mt19937_64 (std::shuffle's algorithm differs between standard
// libraries; shards written from the same seed must not).
void Permute(ops::Dataset& data, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = data.paths.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng() % i);
    std::swap(data.paths[i - 1], data.paths[j]);
    std::swap(data.labels[i - 1], data.labels[j]);
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1e-9);
}

// The bar on a terminal: "[#####.......]  130/260 samples  2 shards  48.1 MB/s  ETA 0:03".
class ShardsProgress {
 public:
  ShardsProgress(std::ostream& out, bool enabled, int64_t samples, int64_t input_bytes)
      : out_(out), enabled_(enabled), samples_(samples), input_bytes_(input_bytes) {}
  void Update(int64_t done, int64_t shards, int64_t bytes_read, bool force = false) {
    if (!enabled_) return;
    const double elapsed = SecondsSince(start_);
    if (!force && elapsed - last_ < 0.1) return;
    last_ = elapsed;
    constexpr int kWidth = 24;
    const int filled = samples_ > 0 ? static_cast<int>(kWidth * done / samples_) : kWidth;
    const double rate = static_cast<double>(bytes_read) / elapsed;
    const double eta = rate > 0 ? static_cast<double>(input_bytes_ - bytes_read) / rate : 0.0;
    char line[200];
    std::snprintf(line, sizeof(line), "[%s%s]  %lld/%lld samples  %lld shards  %.1f MB/s  ETA %s",
                  std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
                  static_cast<long long>(done), static_cast<long long>(samples_), static_cast<long long>(shards),
                  rate / 1e6, FormatDuration(eta).c_str());
    out_ << "\r" << line << "\x1b[K" << std::flush;
    drawn_ = true;
  }
  // Clears the bar so that a line can be printed in its place (the next Update redraws it).
  void Clear() {
    if (drawn_) out_ << "\r\x1b[K";
    drawn_ = false;
  }

 private:
  std::ostream& out_;
  bool enabled_;
  int64_t samples_, input_bytes_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_ = -1.0;
  bool drawn_ = false;
};

// Shards of an earlier run under the same prefix would be read with this run's by a glob, or
// outlive it when it writes fewer: the folder must not hold any.
void RefuseEarlierShards(const std::string& output, const std::string& prefix, const std::string& suffix) {
  std::error_code ec;
  for (fs::directory_iterator it(output, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(prefix + "-") && (name.ends_with(suffix) || name.ends_with(suffix + ".idx"))) {
      throw InvalidArgument("--output " + Quote(output) + " already holds " + Quote(name) +
                            " (shards of an earlier run): remove them or choose another --prefix or --output");
    }
  }
}

std::string FormatMb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

int64_t ParseByteSize(const std::string& text) {
  const std::string expected = "--shard-size: expected a size in bytes such as 256M or 1G (K, M, G, T: powers of 1024), got " + Quote(text);
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || !std::isdigit(static_cast<unsigned char>(text[0])) || !std::isfinite(number)) {
    throw InvalidArgument(expected);
  }
  std::string unit(end);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
  if (unit.size() > 1 && (unit.ends_with("IB") || unit.ends_with("B"))) unit.erase(unit.size() - (unit.ends_with("IB") ? 2 : 1));
  const std::string units = "BKMGT";
  const size_t power = unit.empty() ? 0 : units.find(unit);
  if (unit.size() > 1 || power == std::string::npos) throw InvalidArgument(expected);
  const double bytes = std::floor(number * std::pow(1024.0, static_cast<double>(power)));
  if (bytes < 1) throw InvalidArgument(expected + ": it must be at least 1 byte");
  if (bytes > 9.0e18) throw InvalidArgument(expected + ": it must be below 8 EiB");
  return static_cast<int64_t>(bytes);
}

int WriteShards(const ShardsOptions& options, std::ostream& out) {
  const std::unique_ptr<ShardSink> sink = MakeSink(options.format);
  if (options.output.empty()) throw InvalidArgument("--output: expected the folder to write the shards to");
  if (options.prefix.empty() || options.prefix.find('/') != std::string::npos) {
    throw InvalidArgument("--prefix: expected a file name without '/' (shards are PREFIX-000000" +
                          std::string(sink->suffix()) + ", ...), got " + Quote(options.prefix));
  }
  ops::Dataset data = ListSamples(options);
  if (options.shuffle) Permute(data, options.seed);
  int64_t input_bytes = 0;
  for (const std::string& path : data.paths) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec) throw InvalidArgument(Quote(path) + ": cannot read: " + ec.message());
    input_bytes += static_cast<int64_t>(size);
  }
  std::error_code ec;
  fs::create_directories(options.output, ec);
  if (ec || !fs::is_directory(options.output)) {
    throw InvalidArgument("--output " + Quote(options.output) + ": cannot create the folder: " +
                          (ec ? ec.message() : "a file of that name exists"));
  }
  RefuseEarlierShards(options.output, options.prefix, sink->suffix());

  const size_t count = data.paths.size();
  const size_t key_width = std::max<size_t>(6, std::to_string(count - 1).size());
  ShardsProgress progress(out, options.progress && isatty(STDOUT_FILENO) != 0, static_cast<int64_t>(count), input_bytes);
  const auto start = std::chrono::steady_clock::now();
  int64_t shards = 0, total_bytes = 0, read_bytes = 0, shard_bytes = 0, shard_samples = 0;
  std::string shard_path;
  auto close_shard = [&] {
    sink->Close();
    progress.Clear();
    out << shard_path << ": " << shard_samples << (shard_samples == 1 ? " sample, " : " samples, ")
        << FormatMb(shard_bytes) << "\n";
    total_bytes += shard_bytes;
  };
  for (size_t i = 0; i < count; ++i) {
    const std::string file = ReadWhole(data.paths[i]);
    read_bytes += static_cast<int64_t>(file.size());
    std::string key = std::to_string(i);
    key.insert(0, key_width - std::min(key.size(), key_width), '0');
    const int64_t sample_bytes = sink->Encode(key, data.paths[i], file, data.labels[i]);
    // A sample that would take the open shard past the target starts the next one.
    if (shard_samples > 0 && shard_bytes + sample_bytes > options.shard_size) {
      close_shard();
      shard_samples = 0;
    }
    if (shard_samples == 0) {
      char name[32];
      std::snprintf(name, sizeof(name), "-%06lld", static_cast<long long>(shards++));
      shard_path = (fs::path(options.output) / (options.prefix + name + sink->suffix())).string();
      sink->Open(shard_path);
      shard_bytes = sink->empty_bytes();
    }
    sink->Append();
    shard_bytes += sample_bytes;
    ++shard_samples;
    progress.Update(static_cast<int64_t>(i + 1), shards, read_bytes, i + 1 == count);
  }
  close_shard();
  const double seconds = SecondsSince(start);
  char line[160];
  std::snprintf(line, sizeof(line), "%lld shards, %zu samples, %s written in %.2f s (%.1f MB/s) to ",
                static_cast<long long>(shards), count, FormatMb(total_bytes).c_str(), seconds,
                static_cast<double>(total_bytes) / 1e6 / seconds);
  out << line << options.output << "\n";
  return 0;
}

namespace {

// --index's format: --format, else the first file's name (.tar; .tfrecord or .tfrec).
std::string IndexFormatOf(const std::string& format, const std::vector<std::string>& files) {
  if (!format.empty()) return format;
  const std::string name = files.front().substr(0, files.front().find('?'));
  if (name.ends_with(".tar")) return "webdataset";
  if (name.ends_with(".tfrecord") || name.ends_with(".tfrec")) return "tfrecord";
  throw InvalidArgument("--index: cannot tell the format of " + Quote(files.front()) +
                        " from its name (expected .tar, .tfrecord or .tfrec): give --format webdataset|tfrecord");
}

}  // namespace

ShardsCommand::ShardsCommand(CLI::App& app) {
  command_ = app.add_subcommand("shards", "Write WebDataset or TFRecord shards (and indexes) from a folder or file list");
  command_->add_option("--format", options_.format, "webdataset (tar) or tfrecord")
      ->check(CLI::IsMember({"webdataset", "tfrecord"}));
  command_->add_option("--file-root", options_.file_root, "A folder with one subfolder of images per class");
  command_->add_option("--file-list", options_.file_list, "A file of 'path label' lines (readers.file's file_list)");
  command_->add_option("-o,--output", options_.output, "Folder for the shards (with --index: for the indexes)");
  command_->add_option("--prefix", options_.prefix, "Shard names: PREFIX-000000.tar, ... (default shard)");
  command_->add_option("--shard-size", shard_size_, "Target bytes per shard, e.g. 256M, 1G (default 256M)");
  CLI::Option* shuffle = command_->add_flag("--shuffle", options_.shuffle, "Write the samples in a random order (see --seed)");
  command_->add_option("--seed", options_.seed, "Seed of --shuffle's order (default 0)")->needs(shuffle);
  command_->add_flag("--no-progress", no_progress_, "No progress bar");
  command_->add_flag("--index", index_, "Write the indexes of the existing shards given (as conveyor index)");
  command_->add_option("shards", files_, "With --index: the shards (paths or URLs)");
}

int ShardsCommand::Run(std::ostream& out) const {
  if (index_) {
    if (files_.empty()) throw InvalidArgument("--index: expected the shards to index, got none");
    const std::string format = IndexFormatOf(options_.format, files_);
    return format == "webdataset" ? IndexWebDatasetShards(files_, options_.output, out)
                                  : IndexTfRecordFiles(files_, options_.output, out);
  }
  if (!files_.empty()) {
    throw InvalidArgument("unexpected argument " + Quote(files_.front()) +
                          ": shards are written from --file-root or --file-list (existing shards are indexed with --index)");
  }
  if (options_.format.empty()) throw InvalidArgument("--format: expected webdataset or tfrecord, got none");
  ShardsOptions options = options_;
  options.shard_size = ParseByteSize(shard_size_);
  options.progress = !no_progress_;
  return WriteShards(options, out);
}

}  // namespace conveyor::cli
