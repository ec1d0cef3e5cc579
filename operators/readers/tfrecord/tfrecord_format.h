// TFRecord framing and DALI's text index (tfrecord2idx), read through ByteSource so that local
// files and URLs work alike. Nothing here opens a file.
//
// A TFRecord file is a sequence of records, each:
//
//   | bytes    | content                                            |
//   |----------|----------------------------------------------------|
//   | 8        | length n of the data, uint64 little-endian          |
//   | 4        | masked CRC32C of those 8 bytes (crc32c.h)           |
//   | n        | the data (a serialized tf.train.Example)            |
//   | 4        | masked CRC32C of the data                           |
//
// An index (DALI's tfrecord2idx format) has one line per record: `offset size`, two decimal
// integers, where size is the whole framed record (n + 16). Blank lines are ignored.
//
// Every error is InvalidArgument naming the file, the record's index and offset, what was expected
// and what arrived:
//   "train-0001.tfrecord": record 17 at offset 52311: data CRC32C 0x1234abcd, expected 0x9abc0123
//   "train.idx": line 3: expected "offset size" (two non-negative integers), got "12 x"
// Sizes read from a file are checked against the file's size before anything is allocated.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {

// Bytes of a record that are not data: length (8), its CRC (4), the data's CRC (4).
constexpr int64_t kTfRecordHeaderBytes = 12;
constexpr int64_t kTfRecordOverhead = 16;

// One framed record: [offset, offset + size) of its file, size = data length + 16.
struct TfRecordSpan {
  int64_t offset = 0;
  int64_t size = 0;
  int64_t line = 0;  // the index line that listed it (0: found by a scan)
  int64_t data_size() const { return size - kTfRecordOverhead; }
  friend bool operator==(const TfRecordSpan& a, const TfRecordSpan& b) {
    return a.offset == b.offset && a.size == b.size;
  }
};

// How messages about one record start: "\"train.tfrecord\": record 17 at offset 52311".
std::string RecordWhere(const std::string& file, int64_t record, int64_t offset);

// The data length a record's 12 header bytes announce, after checking the length's CRC and that
// the record fits in the `file_size - offset` bytes left. Throws InvalidArgument (`where` first).
int64_t ParseTfRecordHeader(const uint8_t* header, int64_t offset, int64_t file_size, const std::string& where);

// The data of a whole framed record in memory (`size` bytes, as read from `span`), after checking
// its length header (CRC, and that it matches the span's size) and the data's CRC32C.
std::span<const uint8_t> CheckTfRecord(const uint8_t* framed, int64_t size, const std::string& where);

// Every record of `source`, found by walking its headers (lengths and their CRCs are checked; the
// data is skipped, its CRC checked when read). Reads the file in blocks of `block_bytes` (a header
// lying in the last block read costs no read; after a record of a quarter block or more, only the
// next header's 12 bytes are read). A record running past the end of the file or a file ending inside a
// header is an error naming the record.
std::vector<TfRecordSpan> ScanTfRecords(const ByteSource& source, int64_t block_bytes = 64 << 10);

// Parses an index's text (`index_name` for messages). Each span keeps its line number. Throws on a
// malformed line or a record smaller than its 16 bytes of framing.
std::vector<TfRecordSpan> ParseTfRecordIndex(const std::string& text, const std::string& index_name);
// Checks that every record of an index lies inside its file of `file_size` bytes; the error names
// the index line, the record and both files.
void CheckTfRecordIndex(const std::vector<TfRecordSpan>& spans, const std::string& index_name,
                        const std::string& file_name, int64_t file_size);
// Reads a whole index through its ByteSource and parses it.
std::vector<TfRecordSpan> ReadTfRecordIndex(const ByteSource& index);

// The index text of `spans`, one "offset size\n" per record (what tfrecord2idx writes).
std::string FormatTfRecordIndex(const std::vector<TfRecordSpan>& spans);

// Frames `data` as one record (tests, tools): header, data, footer.
std::string FrameTfRecord(std::span<const uint8_t> data);

}  // namespace conveyor::ops
