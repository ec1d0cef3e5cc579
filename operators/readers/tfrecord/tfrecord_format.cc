#include "operators/readers/tfrecord/tfrecord_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "operators/readers/tfrecord/crc32c.h"

namespace conveyor::ops {
namespace {

uint64_t Load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t Load32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

void Store32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

std::string Hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", v);
  return text;
}

// "12 345" → {12, 345}; false for anything else (signs, extra fields, overflow).
bool ParseTwoInts(const std::string& line, int64_t& a, int64_t& b) {
  const char* p = line.c_str();
  int64_t values[2];
  for (int64_t& v : values) {
    while (*p == ' ' || *p == '\t') ++p;
    if (*p < '0' || *p > '9') return false;
    v = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
      if (v > (INT64_MAX - (*p - '0')) / 10) return false;
      v = v * 10 + (*p - '0');
    }
  }
  while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
  if (*p != '\0') return false;
  a = values[0];
  b = values[1];
  return true;
}

}  // namespace

std::string RecordWhere(const std::string& file, int64_t record, int64_t offset) {
  return "\"" + file + "\": record " + std::to_string(record) + " at offset " + std::to_string(offset);
}

namespace {

// A record header, decoded without building any message (the scan's per-record fast path).
struct Header {
  uint64_t length = 0;
  uint32_t have_crc = 0, want_crc = 0;
  int64_t left = 0;  // bytes of the file after the record's framing
  bool crc_ok() const { return have_crc == want_crc; }
  bool fits() const { return left >= 0 && length <= static_cast<uint64_t>(left); }
};

Header DecodeHeader(const uint8_t* header, int64_t offset, int64_t file_size) {
  Header h;
  h.want_crc = UnmaskCrc32c(Load32(header + 8));
  h.have_crc = Crc32c(header, 8);
  h.length = Load64(header);
  h.left = file_size - offset - kTfRecordOverhead;
  return h;
}

[[noreturn]] void ThrowHeaderError(const Header& h, int64_t offset, int64_t file_size, const std::string& where) {
  if (!h.crc_ok()) {
    throw InvalidArgument(where + ": length CRC32C " + Hex(h.have_crc) + ", expected " + Hex(h.want_crc) +
                          " (a corrupt header, or not a TFRecord file)");
  }
  throw InvalidArgument(where + ": the header announces " + std::to_string(h.length) + " bytes of data (" +
                        std::to_string(h.length + kTfRecordOverhead) + " with framing), the file has " +
                        std::to_string(file_size - offset) + " bytes left (truncated?)");
}

}  // namespace

int64_t ParseTfRecordHeader(const uint8_t* header, int64_t offset, int64_t file_size, const std::string& where) {
  const Header h = DecodeHeader(header, offset, file_size);
  if (!h.crc_ok() || !h.fits()) ThrowHeaderError(h, offset, file_size, where);
  return static_cast<int64_t>(h.length);
}

std::span<const uint8_t> CheckTfRecord(const uint8_t* framed, int64_t size, const std::string& where) {
  if (size < kTfRecordOverhead) {
    throw InvalidArgument(where + ": " + std::to_string(size) + " bytes cannot hold a record (at least " +
                          std::to_string(kTfRecordOverhead) + " bytes of framing)");
  }
  const int64_t length = ParseTfRecordHeader(framed, 0, size, where);
  if (length + kTfRecordOverhead != size) {
    throw InvalidArgument(where + ": the header announces " + std::to_string(length) + " bytes of data (" +
                          std::to_string(length + kTfRecordOverhead) + " with framing), the index says " +
                          std::to_string(size));
  }
  const uint8_t* data = framed + kTfRecordHeaderBytes;
  const uint32_t want = UnmaskCrc32c(Load32(data + length));
  const uint32_t have = Crc32c(data, static_cast<size_t>(length));
  if (have != want) throw InvalidArgument(where + ": data CRC32C " + Hex(have) + ", expected " + Hex(want));
  return {data, static_cast<size_t>(length)};
}

std::vector<TfRecordSpan> ScanTfRecords(const ByteSource& source, int64_t block_bytes) {
  const int64_t file_size = source.Size();
  std::vector<uint8_t> block;
  int64_t block_offset = 0;  // block holds [block_offset, block_offset + block.size())
  std::vector<TfRecordSpan> spans;
  int64_t last_size = 0;
  for (int64_t offset = 0; offset < file_size;) {
    const auto where = [&] { return RecordWhere(source.name(), static_cast<int64_t>(spans.size()), offset); };
    if (file_size - offset < kTfRecordHeaderBytes) {
      throw InvalidArgument(where() + ": the file ends " + std::to_string(file_size - offset) +
                            " bytes into a record's 12-byte header (truncated?)");
    }
    if (offset < block_offset || offset + kTfRecordHeaderBytes > block_offset + static_cast<int64_t>(block.size())) {
      // After a record of a quarter block or more the next is likely as long: its header alone is
      // read (one small read instead of a block mostly skipped).
      const int64_t want = last_size * 4 >= block_bytes ? kTfRecordHeaderBytes : std::max(block_bytes, kTfRecordHeaderBytes);
      block_offset = offset;
      block.resize(static_cast<size_t>(std::min(want, file_size - offset)));
      source.ReadAt(block_offset, block.data(), static_cast<int64_t>(block.size()));
    }
    const Header h = DecodeHeader(block.data() + (offset - block_offset), offset, file_size);
    if (!h.crc_ok() || !h.fits()) ThrowHeaderError(h, offset, file_size, where());
    last_size = static_cast<int64_t>(h.length) + kTfRecordOverhead;
    spans.push_back({offset, last_size, 0});
    offset += last_size;
  }
  return spans;
}

std::vector<TfRecordSpan> ParseTfRecordIndex(const std::string& text, const std::string& index_name) {
  std::vector<TfRecordSpan> spans;
  int64_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "\"" + index_name + "\": line " + std::to_string(line_number);
    int64_t offset = 0, size = 0;
    if (!ParseTwoInts(line, offset, size)) {
      throw InvalidArgument(where + ": expected \"offset size\" (two non-negative integers), got \"" +
                            line.substr(0, 80) + "\"");
    }
    if (size < kTfRecordOverhead) {
      throw InvalidArgument(where + ": record " + std::to_string(spans.size()) + " of " + std::to_string(size) +
                            " bytes is smaller than a record's " + std::to_string(kTfRecordOverhead) +
                            " bytes of framing");
    }
    spans.push_back({offset, size, line_number});
  }
  return spans;
}

void CheckTfRecordIndex(const std::vector<TfRecordSpan>& spans, const std::string& index_name,
                        const std::string& file_name, int64_t file_size) {
  for (size_t r = 0; r < spans.size(); ++r) {
    const TfRecordSpan& s = spans[r];
    if (s.offset > file_size || s.size > file_size - s.offset) {
      throw InvalidArgument("\"" + index_name + "\": line " + std::to_string(s.line) + ": record " +
                            std::to_string(r) + " at offset " + std::to_string(s.offset) + " of " +
                            std::to_string(s.size) + " bytes ends at " + std::to_string(s.offset + s.size) +
                            ", past the end of \"" + file_name + "\" (" + std::to_string(file_size) +
                            " bytes): an index of another file?");
    }
  }
}

std::vector<TfRecordSpan> ReadTfRecordIndex(const ByteSource& index) {
  std::string text(static_cast<size_t>(index.Size()), '\0');
  index.ReadAt(0, text.data(), static_cast<int64_t>(text.size()));
  return ParseTfRecordIndex(text, index.name());
}

std::string FormatTfRecordIndex(const std::vector<TfRecordSpan>& spans) {
  std::string text;
  text.reserve(spans.size() * 16);
  for (const TfRecordSpan& s : spans) text += std::to_string(s.offset) + " " + std::to_string(s.size) + "\n";
  return text;
}

std::string FrameTfRecord(std::span<const uint8_t> data) {
  std::string out(data.size() + kTfRecordOverhead, '\0');
  const uint64_t length = data.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(length >> (8 * i));
  Store32(MaskCrc32c(Crc32c(out.data(), 8)), out.data() + 8);
  if (!data.empty()) std::memcpy(out.data() + kTfRecordHeaderBytes, data.data(), data.size());
  Store32(MaskCrc32c(Crc32c(data.data(), data.size())), out.data() + kTfRecordHeaderBytes + data.size());
  return out;
}

}  // namespace conveyor::ops
