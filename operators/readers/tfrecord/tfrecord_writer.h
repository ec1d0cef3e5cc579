// TfRecordWriter: writes tf.train.Example records (serialized by protobuf) into one TFRecord file,
// framed with their CRC32Cs, and the file's tfrecord2idx index beside it (PATH.idx) — what the
// sample-data tool writes and readers.tfrecord reads. (The tests' files come from an independent
// encoder, write_tfrecords.py; writer_test cross-checks this one against it.)
//
// Both files are written under temporary names and renamed by Close(): a reader never sees half a
// file. Errors are InvalidArgument naming the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "operators/readers/tfrecord/tfrecord_format.h"

namespace conveyor::ops {

// One feature of an Example: exactly one of the lists is used, by `kind`.
struct ExampleFeature {
  enum Kind { kBytes, kInt64, kFloat } kind = kBytes;
  std::string name;
  std::vector<std::string> bytes;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

class TfRecordWriter {
 public:
  explicit TfRecordWriter(std::string path);
  ~TfRecordWriter();  // without Close(): the temporary files are removed
  TfRecordWriter(const TfRecordWriter&) = delete;  // one open file, one owner
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one record holding an Example of `features`, in order.
  void Write(const std::vector<ExampleFeature>& features);
  // The serialized Example of `features`: what Write() appends (framing adds 16 bytes), for a
  // caller that needs a record's size before writing it (`conveyor shards`' size target).
  static std::string SerializeExample(const std::vector<ExampleFeature>& features);
  // Appends one record of `data` as it is.
  void WriteRecord(std::span<const uint8_t> data);
  // Writes the index and moves both files to their names.
  void Close();

  int64_t records() const { return static_cast<int64_t>(spans_.size()); }
  int64_t bytes() const { return offset_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t offset_ = 0;
  std::vector<TfRecordSpan> spans_;
};

}  // namespace conveyor::ops
