// readers.webdataset: WebDataset tar shards (local paths, globs, brace ranges, http(s) URLs), one
// output per `ext` entry, sharded, shuffled and checkpointed by ShardReaderOp (shards/).
//
// | output        | dtype                     | shape per sample  | content                           |
// |---------------|---------------------------|-------------------|-----------------------------------|
// | one per `ext` | dtypes[i] (default uint8) | [size / dtype size]| the sample's first member whose  |
// |               |                           |                   | extension is in the entry ("jpg;png": either)|
//
// A sample lacking an entry's extension: missing_component_behavior skip (left out of the data
// set when it is built), fill (an empty output, [0]), error (InvalidArgument naming the sample and
// the extensions asked). The index: index_paths (DALI's wds2idx files, one per shard) or a scan of
// every shard's tar headers at construction, in parallel (tar_scan.h).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <set>

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_paths.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"

namespace conveyor::ops {
namespace {

const OpSchema kWebDatasetSchema = WithShardReaderArgs(
    OpSchema("readers.webdataset")
        .Doc("Reads WebDataset tar shards (paths, globs, {000..099} ranges, http(s) URLs): one output per `ext` "
             "entry, each sample's member bytes. The index comes from index_paths (DALI's wds2idx format; "
             "`conveyor index webdataset` writes it) or from scanning the tar headers (libarchive) at construction.")
        .Output("data", "One per ext entry: the sample's member with that extension, uint8 [size] (or dtypes').")
        .OutputPerEntryOf("ext")
        .RequiredArg<std::vector<std::string>>("paths", "Tar shards: paths, globs, brace ranges or http(s) URLs.")
        .Path()
        .Arg<std::vector<std::string>>("index_paths", std::vector<std::string>{},
                                       "One index file per shard (DALI's wds2idx format, v1.1 or v1.2), in the "
                                       "order of paths; without them every shard's headers are scanned.")
        .Path()
        .RequiredArg<std::vector<std::string>>(
            "ext", "One output per entry; an entry lists extensions separated by ';' (\"jpg;png\").")
        .Arg<std::string>("missing_component_behavior", "fill",
                          "A sample without an entry's extension: skip (leave the sample out), fill (an empty "
                          "output; DALI's empty), error.")
        .Choices({"skip", "fill", "empty", "error"})
        .Arg<std::vector<DType>>("dtypes", std::vector<DType>{},
                                 "Per output, the type the bytes are read as (size must be a multiple); default uint8.")
        .Arg<bool>("case_sensitive_extensions", true, "Match extensions with case (false: jpg matches JPG)."));

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class WebDatasetReaderOp final : public ShardReaderOp {
 public:
  explicit WebDatasetReaderOp(const OpSpec& spec) : ShardReaderOp(spec) {
    const std::string where = spec.Describe();
    const std::vector<std::string> paths = ExpandShardPaths(spec.Arg<std::vector<std::string>>("paths"), "paths", where);
    const std::vector<std::string> index_paths =
        ExpandShardPaths(spec.Arg<std::vector<std::string>>("index_paths"), "index_paths", where);
    if (paths.empty()) throw InvalidArgument(where + ": paths: expected at least one tar shard, got none");
    if (!index_paths.empty() && index_paths.size() != paths.size()) {
      throw InvalidArgument(where + ": index_paths: expected one index per shard (" + std::to_string(paths.size()) +
                            "), got " + std::to_string(index_paths.size()));
    }
    ParseOutputs(spec);
    std::vector<ShardInfo> shards(paths.size());
    ListShards(static_cast<int64_t>(paths.size()), [&](int64_t s) {
      ShardInfo& shard = shards[static_cast<size_t>(s)];
      shard.path = paths[static_cast<size_t>(s)];
      if (index_paths.empty()) {
        Scan(shard);
      } else {
        shard.index_path = index_paths[static_cast<size_t>(s)];
        ReadIndex(shard);
      }
      MapComponents(shard);
    });
    SetIndex(ShardIndex(std::move(shards)));
  }

  int64_t skipped_samples() const { return skipped_; }

 protected:
  OutputDescs SetupSamples(const Workspace& ws, const std::vector<BatchSample>& batch) override {
    (void)ws;
    OutputDescs descs(groups_.size());
    for (size_t o = 0; o < groups_.size(); ++o) {
      descs[o].dtype = dtypes_[o];
      const int64_t item = static_cast<int64_t>(DTypeSize(dtypes_[o]));
      for (const BatchSample& s : batch) descs[o].shapes.push_back(Shape{s.sample->components[o].size / item});
    }
    return descs;
  }

  void ReadSample(Workspace& ws, int i, const BatchSample& sample) override {
    for (size_t o = 0; o < groups_.size(); ++o) {
      const ShardComponent& c = sample.sample->components[o];
      if (c.size > 0) ReadComponent(sample, c, ws.OutputCpu(static_cast<int>(o)).raw_sample(i));
    }
  }

  std::string SourceName(const BatchSample& sample, int output) const override {
    return SampleName(sample, sample.sample->components[static_cast<size_t>(output)].ext);
  }

 private:
  enum class Missing { kSkip, kFill, kError };
  // Shards scanned or indexes read at once at construction: enough to hide a request's latency.

  void ParseOutputs(const OpSpec& spec) {
    const std::string where = spec.Describe();
    case_sensitive_ = spec.Arg<bool>("case_sensitive_extensions");
    for (const std::string& entry : spec.Arg<std::vector<std::string>>("ext")) {
      std::vector<std::string> group;
      size_t start = 0;
      for (size_t semi;; start = semi + 1) {
        semi = entry.find(';', start);
        const std::string ext = entry.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
        if (ext.empty()) throw InvalidArgument(where + ": ext: expected extensions separated by ';', got \"" + entry + "\"");
        group.push_back(case_sensitive_ ? ext : Lower(ext));
        if (semi == std::string::npos) break;
      }
      groups_.push_back(std::move(group));
    }
    if (groups_.empty()) throw InvalidArgument(where + ": ext: expected at least one extension (one output each)");
    dtypes_ = spec.Arg<std::vector<DType>>("dtypes");
    if (dtypes_.empty()) dtypes_.assign(groups_.size(), DType::kUInt8);
    if (dtypes_.size() != groups_.size()) {
      throw InvalidArgument(where + ": dtypes: expected one per ext entry (" + std::to_string(groups_.size()) +
                            "), got " + std::to_string(dtypes_.size()));
    }
    const std::string missing = spec.Arg<std::string>("missing_component_behavior");
    missing_ = missing == "skip" ? Missing::kSkip : missing == "error" ? Missing::kError : Missing::kFill;
  }

  void Scan(ShardInfo& shard) const {
    std::unique_ptr<ByteSource> source;
    try {
      source = OpenByteSource(shard.path, fetch_options());
      shard.bytes = source->Size();
      shard.samples = GroupMembers(ScanTar(*source));
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      // ScanTar's messages name the shard already; OpenByteSource's name only the path.
      throw InvalidArgument(spec().Describe() + ": " + (what.rfind("shard ", 0) == 0 ? what : "shard " + what));
    }
  }

  void ReadIndex(ShardInfo& shard) const {
    std::string text;
    try {
      const std::unique_ptr<ByteSource> source = OpenByteSource(shard.index_path, fetch_options());
      text.resize(static_cast<size_t>(source->Size()));
      source->ReadAt(0, text.data(), source->Size());
      shard.samples = ParseWdsIndex(text, shard.index_path);
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      throw InvalidArgument(spec().Describe() + ": " + (what.rfind("index ", 0) == 0 ? what : "index " + what));
    }
  }

  // Keeps, per sample, one component per output (the first member matching its entry), or
  // applies missing_component_behavior; checks dtype multiples.
  void MapComponents(ShardInfo& shard) {
    std::vector<ShardSample> kept;
    kept.reserve(shard.samples.size());
    for (ShardSample& sample : shard.samples) {
      std::vector<ShardComponent> outputs(groups_.size());
      bool complete = true;
      for (size_t o = 0; o < groups_.size(); ++o) {
        const auto it = std::find_if(sample.components.begin(), sample.components.end(), [&](const ShardComponent& c) {
          const std::string ext = case_sensitive_ ? c.ext : Lower(c.ext);
          return std::find(groups_[o].begin(), groups_[o].end(), ext) != groups_[o].end();
        });
        if (it == sample.components.end()) {
          complete = false;
          if (missing_ == Missing::kError) {
            throw InvalidArgument(spec().Describe() + ": " + shard.path + ":" + sample.key + ": no member with " +
                                  "extension " + Join(groups_[o]) + " (output " + std::to_string(o) + "; it has " +
                                  Extensions(sample) + "); missing_component_behavior: error");
          }
          continue;  // fill: an empty component (ext "": the source names the sample)
        }
        const int64_t item = static_cast<int64_t>(DTypeSize(dtypes_[o]));
        if (it->size % item != 0) {
          throw InvalidArgument(spec().Describe() + ": " + shard.path + ":" + sample.key + "." + it->ext + ": " +
                                std::to_string(it->size) + " bytes are not a whole number of " +
                                std::string(DTypeName(dtypes_[o])) + " values (" + std::to_string(item) + " bytes each)");
        }
        outputs[o] = *it;
      }
      if (!complete && missing_ == Missing::kSkip) {
        ++skipped_;
        continue;
      }
      sample.components = std::move(outputs);
      kept.push_back(std::move(sample));
    }
    shard.samples = std::move(kept);
  }

  static std::string Join(const std::vector<std::string>& exts) {
    std::string out;
    for (const std::string& e : exts) out += (out.empty() ? "\"" : " or \"") + e + "\"";
    return out;
  }
  static std::string Extensions(const ShardSample& sample) {
    std::string out;
    for (const ShardComponent& c : sample.components) out += (out.empty() ? "" : ", ") + ("\"" + c.ext + "\"");
    return out.empty() ? "none" : out;
  }

  std::vector<std::vector<std::string>> groups_;
  std::vector<DType> dtypes_;
  bool case_sensitive_ = true;
  Missing missing_ = Missing::kFill;
  std::atomic<int64_t> skipped_{0};
};

const OperatorRegistration<WebDatasetReaderOp> kRegistration(kWebDatasetSchema);

}  // namespace
}  // namespace conveyor::ops
