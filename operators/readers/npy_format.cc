#include "operators/readers/npy_format.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <string_view>

#include "core/error.h"

namespace conveyor::ops {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return out + (s.size() > 80 ? "..." : "");
}

// A tiny reader of the dict literal NumPy writes: 'key': value pairs, values being a quoted
// string, True/False, or a tuple of non-negative integers.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& where) : s_(text), where_(where) {}

  NpyHeader Parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    Skip();
    Expect('{');
    for (;;) {
      Skip();
      if (Peek() == '}') break;
      const std::string key = QuotedString();
      Skip();
      Expect(':');
      Skip();
      if (key == "descr") {
        if (Peek() == '[') Fail("structured dtypes (descr is a list) are not supported");
        h.dtype = ParseDescr(QuotedString());
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = Bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = Tuple();
        have_shape = true;
      } else {
        Fail("unexpected key '" + key + "' in the header");
      }
      Skip();
      if (Peek() == ',') ++pos_;
    }
    if (!have_descr || !have_order || !have_shape) Fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw InvalidArgument(where_ + ": " + what + " (header: " + Printable(s_) + ")");
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void Expect(char c) {
    if (Peek() != c) Fail(std::string("expected '") + c + "' at header offset " + std::to_string(pos_));
    ++pos_;
  }
  std::string QuotedString() {
    const char q = Peek();
    if (q != '\'' && q != '"') Fail("expected a quoted string at header offset " + std::to_string(pos_));
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) Fail("unterminated string in the header");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool Bool() {
    if (s_.substr(pos_, 4) == "True") return pos_ += 4, true;
    if (s_.substr(pos_, 5) == "False") return pos_ += 5, false;
    Fail("fortran_order must be True or False");
  }
  Shape Tuple() {
    Expect('(');
    std::vector<int64_t> dims;
    for (;;) {
      Skip();
      if (Peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) Fail("shape must be a tuple of non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        const int d = s_[pos_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10) Fail("a shape extent overflows int64");
        v = v * 10 + d;
      }
      dims.push_back(v);
      Skip();
      if (Peek() == ',') ++pos_;
    }
    ++pos_;
    if (dims.size() > static_cast<size_t>(Shape::kMaxDims)) {
      Fail("arrays of " + std::to_string(dims.size()) + " dimensions are not supported (at most " +
           std::to_string(Shape::kMaxDims) + ")");
    }
    Shape shape(dims);
    int64_t total = 1;
    for (int64_t d : dims) {
      if (d != 0 && total > std::numeric_limits<int64_t>::max() / 16 / d) Fail("the shape's element count overflows");
      total *= d;
    }
    return shape;
  }
  DType ParseDescr(const std::string& d) {
    if (d.size() < 2) Fail("unsupported dtype '" + d + "'");
    const char order = d[0];
    const std::string kind = d.substr(1);
    if (order == '>' && kind != "u1" && kind != "i1" && kind != "b1") {
      Fail("big-endian data ('" + d + "') is not supported; save it little-endian (arr.astype('<" + kind + "'))");
    }
    if (order != '<' && order != '|' && order != '=' && order != '>') Fail("unsupported dtype '" + d + "'");
    if (kind[0] == 'O') Fail("object arrays ('" + d + "') are not supported");
    static const std::pair<const char*, DType> kKinds[] = {
        {"b1", DType::kBool},   {"u1", DType::kUInt8},  {"i1", DType::kInt8},     {"u2", DType::kUInt16},
        {"i2", DType::kInt16},  {"i4", DType::kInt32},  {"i8", DType::kInt64},    {"f2", DType::kFloat16},
        {"f4", DType::kFloat32}, {"f8", DType::kFloat64}};
    for (const auto& [name, dtype] : kKinds) {
      if (kind == name) return dtype;
    }
    Fail("unsupported dtype '" + d +
         "' (supported: bool, uint8, int8, uint16, int16, int32, int64, float16, float32, float64)");
  }

  std::string_view s_;
  const std::string& where_;
  size_t pos_ = 0;
};

uint32_t ReadLE(const char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

size_t NpyHeaderLength(const char* data, size_t size, const std::string& where) {
  if (size < 10 || std::memcmp(data, kMagic, kMagicLen) != 0) {
    std::string got;
    char hex[4];
    for (size_t i = 0; i < std::min<size_t>(size, 6); ++i) {
      std::snprintf(hex, sizeof hex, "%02X ", static_cast<uint8_t>(data[i]));
      got += hex;
    }
    throw InvalidArgument(where + ": not a .npy file (expected the magic \\x93NUMPY, got " +
                          (got.empty() ? std::string("an empty file") : got.substr(0, got.size() - 1)) + ")");
  }
  const int major = static_cast<uint8_t>(data[6]);
  if (major < 1 || major > 3) {
    throw InvalidArgument(where + ": unsupported .npy format version " + std::to_string(major) + "." +
                          std::to_string(static_cast<uint8_t>(data[7])) + " (supported: 1.0, 2.0, 3.0)");
  }
  if (major == 1) return 10 + ReadLE(data + 8, 2);
  if (size < 12) throw InvalidArgument(where + ": truncated .npy header");
  return 12 + static_cast<size_t>(ReadLE(data + 8, 4));
}

NpyHeader ParseNpyHeader(const char* data, size_t size, const std::string& where) {
  const size_t total = NpyHeaderLength(data, size, where);
  if (size < total) {
    throw InvalidArgument(where + ": truncated .npy header (expected " + std::to_string(total) + " bytes, the file has " +
                          std::to_string(size) + ")");
  }
  const int major = static_cast<uint8_t>(data[6]);
  const size_t start = major == 1 ? 10 : 12;
  NpyHeader h = DictParser(std::string_view(data + start, total - start), where).Parse();
  h.data_offset = static_cast<int64_t>(total);
  h.major_version = major;
  return h;
}

std::string MakeNpyHeader(DType dtype, const Shape& shape, bool fortran_order, int major_version) {
  std::string descr;
  switch (dtype) {
    case DType::kBool: descr = "|b1"; break;
    case DType::kUInt8: descr = "|u1"; break;
    case DType::kInt8: descr = "|i1"; break;
    case DType::kUInt16: descr = "<u2"; break;
    case DType::kInt16: descr = "<i2"; break;
    case DType::kInt32: descr = "<i4"; break;
    case DType::kInt64: descr = "<i8"; break;
    case DType::kFloat16: descr = "<f2"; break;
    case DType::kFloat32: descr = "<f4"; break;
    case DType::kFloat64: descr = "<f8"; break;
    case DType::kBFloat16:
      throw InvalidArgument(".npy: bfloat16 has no NumPy dtype");
  }
  std::string dims;  // "(2, 3)", "(5,)", "()"
  for (int i = 0; i < shape.ndim(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.ndim() == 1) dims += ",";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                     ", 'shape': (" + dims + "), }";
  const size_t prefix = major_version == 1 ? 10 : 12;
  const size_t padded = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(padded - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major_version);
  out += '\0';
  const uint32_t len = static_cast<uint32_t>(dict.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (major_version != 1) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>((len >> 24) & 0xFF);
  }
  return out + dict;
}

}  // namespace conveyor::ops
