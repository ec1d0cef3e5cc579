// libFuzzer target: readers.tfrecord's format layer on untrusted bytes — the record framing (header
// scan, CRC32C checks), tf.train.Example parsing and the feature lookups and copies, and the
// tfrecord2idx index parser. The first byte picks what the rest is:
//   0: a TFRecord file: scanned, every record checked, parsed and its features looked up/written
//   1: one record's data (an Example): parsed, features looked up and written (no CRC to pass)
//   2: index text, checked against a file of the input's size
// Contract: a conveyor::Error or success; no crash, no other exception, no UB; a value written
// fits exactly the shape LookupFeature returned (ASan guards the buffer's end).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/readers/io/memory_source.h"
#include "operators/readers/tfrecord/features.h"
#include "operators/readers/tfrecord/tf_example.pb.h"
#include "operators/readers/tfrecord/tfrecord_format.h"

namespace {

using namespace conveyor::ops;  // NOLINT: a fuzz target's one translation unit

const std::vector<FeatureSpec>& Specs() {
  static const std::vector<FeatureSpec> specs =
      ParseFeatureSpecs({"a: bytes", "a: bytes[]", "b: int64", "b: int64[]", "c: float[2, 2] = 1", "c: float[]",
                         "d: bytes[2] = xy", "a: int64[3] = [1, 2, 3]"},
                        "fuzz");
  return specs;
}

void ReadFeatures(const uint8_t* data, size_t size) {
  if (size > 1 << 20) return;
  conveyor::tfexample::Example example;
  if (!example.ParseFromArray(data, static_cast<int>(size))) return;
  for (const FeatureSpec& spec : Specs()) {
    try {
      const FeatureValue value = LookupFeature(spec, example, "fuzz");
      const int64_t n = value.shape.num_elements();
      if (n < 0 || n > (1 << 24)) __builtin_trap();
      // Exactly the bytes the shape says: ASan reports any write past them.
      std::vector<uint8_t> out(static_cast<size_t>(n) * conveyor::DTypeSize(spec.dtype()));
      WriteFeature(spec, value, out.data());
    } catch (const conveyor::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  ++data;
  --size;
  try {
    if (mode == 0) {
      const MemorySource source(data, size, "fuzz.tfrecord");
      for (const TfRecordSpan& span : ScanTfRecords(source, 64)) {
        if (span.offset < 0 || span.size < kTfRecordOverhead || span.offset + span.size > static_cast<int64_t>(size)) {
          __builtin_trap();  // the scan promised a record inside the file
        }
        std::vector<uint8_t> framed(static_cast<size_t>(span.size));
        source.ReadAt(span.offset, framed.data(), span.size);
        try {
          const auto record = CheckTfRecord(framed.data(), span.size, "fuzz");
          ReadFeatures(record.data(), record.size());
        } catch (const conveyor::Error&) {
        }
      }
    } else if (mode == 1) {
      ReadFeatures(data, size);
    } else {
      const std::vector<TfRecordSpan> spans =
          ParseTfRecordIndex(std::string(reinterpret_cast<const char*>(data), size), "fuzz.idx");
      CheckTfRecordIndex(spans, "fuzz.idx", "fuzz.tfrecord", static_cast<int64_t>(size));
      for (const TfRecordSpan& s : spans) {
        if (s.offset + s.size > static_cast<int64_t>(size) || s.size < kTfRecordOverhead) __builtin_trap();
      }
    }
  } catch (const conveyor::Error&) {
  }
  return 0;
}
