// readers.tfrecord: tf.train.Example records of TFRecord files (local paths, globs, brace ranges,
// http(s) URLs), one output per `features` entry (features.h), sharded, shuffled and checkpointed
// by ShardReaderOp (shards/): each record is one sample, named "file.tfrecord:record N".
//
// | output          | dtype                  | shape per sample                     |
// |-----------------|------------------------|--------------------------------------|
// | one per feature | uint8 / int64 / float32 | as its spec says (features.h's table)|
//
// The records: index_path (DALI's tfrecord2idx files, one per file, checked against the file's
// size) or a scan of every file's record headers at construction. Setup reads the batch's records
// whole (in parallel), checks both CRC32Cs, parses the Examples and sizes the outputs from them;
// RunCpu copies each feature's values into its output. Every error names the op, the file, the
// record and its offset (and the feature and its spec).
#include <algorithm>
#include <climits>
#include <exception>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_paths.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "operators/readers/tfrecord/features.h"
#include "operators/readers/tfrecord/tf_example.pb.h"
#include "operators/readers/tfrecord/tfrecord_format.h"

namespace conveyor::ops {
namespace {

const OpSchema kTfRecordSchema = WithShardReaderArgs(
    OpSchema("readers.tfrecord")
        .Doc("Reads tf.train.Example records from TFRecord files (paths, globs, {000..099} ranges, http(s) URLs), "
             "every record's length and data checked with their CRC32C: one output per `features` entry. The "
             "records come from index_path (DALI's tfrecord2idx format; `conveyor index tfrecord` writes it) or "
             "from scanning each file's record headers at construction.")
        .Output("data", "One per features entry: uint8 (bytes), int64 or float32, shaped as the entry says.")
        .OutputPerEntryOf("features")
        .RequiredArg<std::vector<std::string>>("path", "TFRecord files: paths, globs, brace ranges or http(s) URLs.")
        .Path()
        .Arg<std::vector<std::string>>("index_path", std::vector<std::string>{},
                                       "One index per file (DALI's tfrecord2idx text format: \"offset size\" per "
                                       "record), in the order of path; without them every file's headers are "
                                       "scanned.")
        .Path()
        .RequiredArg<std::vector<std::string>>(
            "features",
            "One output per entry, \"name: type[shape] = default\": type bytes (or string), int64, float; no "
            "brackets: one value ([1], or a bytes value's [size]); [d0, d1]: exactly that many (FixedLen); []: any "
            "number (VarLen, [n]; bytes: [n, longest], zero-padded). The default fills a missing FixedLen feature "
            "(a number for every element, or [v0, v1, ...]). E.g. [\"image/encoded: bytes\", "
            "\"image/class/label: int64[1] = -1\", \"image/object/bbox/xmin: float[]\"]."));

class TfRecordReaderOp final : public ShardReaderOp {
 public:
  explicit TfRecordReaderOp(const OpSpec& spec)
      : ShardReaderOp(spec),
        features_(ParseFeatureSpecs(spec.Arg<std::vector<std::string>>("features"),
                                    spec.Describe() + ": argument \"features\"")) {
    const std::string where = spec.Describe();
    const std::vector<std::string> paths = ExpandShardPaths(spec.Arg<std::vector<std::string>>("path"), "path", where);
    const std::vector<std::string> index_paths =
        ExpandShardPaths(spec.Arg<std::vector<std::string>>("index_path"), "index_path", where);
    if (paths.empty()) throw InvalidArgument(where + ": path: expected at least one TFRecord file, got none");
    if (!index_paths.empty() && index_paths.size() != paths.size()) {
      throw InvalidArgument(where + ": index_path: expected one index per file of path (" +
                            std::to_string(paths.size()) + "), got " + std::to_string(index_paths.size()));
    }
    std::vector<ShardInfo> files(paths.size());
    for (size_t f = 0; f < paths.size(); ++f) {
      files[f].path = paths[f];
      if (!index_paths.empty()) files[f].index_path = index_paths[f];
    }
    ListAll(files);
    SetIndex(ShardIndex(std::move(files)));
  }

 protected:
  OutputDescs SetupSamples(const Workspace& ws, const std::vector<BatchSample>& batch) override {
    const size_t n = batch.size();
    if (records_.size() < n) {
      records_.resize(n);
      examples_.resize(n);
    }
    values_.resize(n);
    // Each record's error is kept: the one thrown is the first failing record's in batch order,
    // not whichever thread failed first.
    std::vector<std::exception_ptr> errors(n);
    ws.ParallelFor(static_cast<int64_t>(n), 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        try {
          LoadRecord(static_cast<size_t>(i), batch[static_cast<size_t>(i)]);
        } catch (...) {
          errors[static_cast<size_t>(i)] = std::current_exception();
        }
      }
    });
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
    OutputDescs descs(features_.size());
    for (size_t f = 0; f < features_.size(); ++f) {
      descs[f].dtype = features_[f].dtype();
      descs[f].shapes.reserve(n);
      for (size_t i = 0; i < n; ++i) descs[f].shapes.push_back(values_[i][f].shape);
    }
    return descs;
  }

  void ReadSample(Workspace& ws, int i, const BatchSample& sample) override {
    (void)sample;
    const std::vector<FeatureValue>& values = values_[static_cast<size_t>(i)];
    for (size_t f = 0; f < features_.size(); ++f) {
      WriteFeature(features_[f], values[f], ws.OutputCpu(static_cast<int>(f)).raw_sample(i));
    }
  }

 private:
  // Lists every file's records (ListShards: in parallel, the first failing file in path order is
  // the one thrown).
  void ListAll(std::vector<ShardInfo>& files) const {
    try {
      ListShards(static_cast<int64_t>(files.size()), [&](int64_t f) { ListRecords(files[static_cast<size_t>(f)]); });
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(spec().Describe() + ": " + e.what());
    }
  }

  // The file's records as samples ("record N", one component: the framed record), from its index
  // (checked against the file's size when the file is local; a URL's is checked when first opened)
  // or from a scan of its headers.
  void ListRecords(ShardInfo& file) const {
    std::vector<TfRecordSpan> spans;
    if (file.index_path.empty()) {
      const std::unique_ptr<ByteSource> source = OpenByteSource(file.path, fetch_options());
      file.bytes = source->Size();
      spans = ScanTfRecords(*source);
    } else {
      spans = ReadTfRecordIndex(*OpenByteSource(file.index_path, fetch_options()));
      if (!IsUrl(file.path)) {
        file.bytes = OpenByteSource(file.path, fetch_options())->Size();
        CheckTfRecordIndex(spans, file.index_path, file.path, file.bytes);
      }
    }
    file.samples.resize(spans.size());
    for (size_t r = 0; r < spans.size(); ++r) {
      ShardSample& s = file.samples[r];
      s.key = "record " + std::to_string(r);
      s.components = {ShardComponent{"", spans[r].offset, spans[r].size}};
      s.line = spans[r].line;
    }
  }

  // Reads batch position i's record, checks it, parses its Example and looks up every feature.
  void LoadRecord(size_t i, const BatchSample& sample) {
    const ShardComponent& c = sample.sample->components[0];
    const int64_t record = sample.index - index().shard_begin(sample.shard);
    const std::string where = spec().Describe() + ": " + RecordWhere(index().shard(sample.shard).path, record, c.offset);
    uint8_t* framed = records_[i].Reserve(static_cast<size_t>(c.size));
    ReadComponent(sample, c, framed);
    const std::span<const uint8_t> data = CheckTfRecord(framed, c.size, where);
    if (data.size() > static_cast<size_t>(INT_MAX)) {
      throw InvalidArgument(where + ": " + std::to_string(data.size()) +
                            " bytes of data, more than a protobuf message may hold (2 GiB)");
    }
    tfexample::Example& example = examples_[i];
    if (!example.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
      throw InvalidArgument(where + ": its " + std::to_string(data.size()) +
                            " bytes of data are not a tf.train.Example (protobuf parse failed)");
    }
    std::vector<FeatureValue>& values = values_[i];
    values.resize(features_.size());
    for (size_t f = 0; f < features_.size(); ++f) values[f] = LookupFeature(features_[f], example, where);
  }

  // A record's bytes: grown, never zero-filled (a vector's resize would clear every new byte, 11%
  // of the reader's time in perf before it was replaced).
  class RecordBuffer {
   public:
    uint8_t* Reserve(size_t bytes) {
      if (bytes > capacity_) {
        data_.reset(new uint8_t[bytes]);
        capacity_ = bytes;
      }
      return data_.get();
    }

   private:
    std::unique_ptr<uint8_t[]> data_;
    size_t capacity_ = 0;
  };


  std::vector<FeatureSpec> features_;
  // Per batch position, between Setup and RunCpu (reused across batches): the framed record, its
  // parsed Example, and each feature's value (pointing into the Example).
  std::vector<RecordBuffer> records_;
  std::vector<tfexample::Example> examples_;
  std::vector<std::vector<FeatureValue>> values_;
};

const OperatorRegistration<TfRecordReaderOp> kRegistration(kTfRecordSchema);

}  // namespace
}  // namespace conveyor::ops
