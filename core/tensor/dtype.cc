#include "core/tensor/dtype.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/error.h"
#include "core/util/strings.h"

namespace conveyor {
namespace {

struct Info {
  DType dtype;
  std::string_view name;
  size_t size;
  uint8_t dl_code;
  const char* typestr;  // nullptr: no NumPy spelling
};

constexpr std::array<Info, 11> kInfo = {{
    {DType::kBool, "bool", 1, 6, "|b1"},
    {DType::kUInt8, "uint8", 1, 1, "|u1"},
    {DType::kInt8, "int8", 1, 0, "|i1"},
    {DType::kUInt16, "uint16", 2, 1, "<u2"},
    {DType::kInt16, "int16", 2, 0, "<i2"},
    {DType::kInt32, "int32", 4, 0, "<i4"},
    {DType::kInt64, "int64", 8, 0, "<i8"},
    {DType::kFloat16, "float16", 2, 2, "<f2"},
    {DType::kBFloat16, "bfloat16", 2, 4, nullptr},
    {DType::kFloat32, "float32", 4, 2, "<f4"},
    {DType::kFloat64, "float64", 8, 2, "<f8"},
}};

const Info& InfoOf(DType d) { return kInfo[static_cast<size_t>(d)]; }

}  // namespace

std::string_view DTypeName(DType dtype) { return InfoOf(dtype).name; }
size_t DTypeSize(DType dtype) { return InfoOf(dtype).size; }
bool IsFloatingPoint(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

DType ParseDType(std::string_view name) {
  for (const Info& i : kInfo) {
    if (i.name == name) return i.dtype;
  }
  static const std::pair<std::string_view, DType> kAliases[] = {
      {"u8", DType::kUInt8},     {"i8", DType::kInt8},      {"u16", DType::kUInt16},
      {"i16", DType::kInt16},    {"i32", DType::kInt32},    {"i64", DType::kInt64},
      {"f16", DType::kFloat16},  {"half", DType::kFloat16}, {"bf16", DType::kBFloat16},
      {"f32", DType::kFloat32},  {"float", DType::kFloat32}, {"f64", DType::kFloat64},
      {"double", DType::kFloat64}, {"int", DType::kInt32},
  };
  for (const auto& [alias, d] : kAliases) {
    if (alias == name) return d;
  }
  std::vector<std::string> names;
  for (const Info& i : kInfo) names.emplace_back(i.name);
  throw InvalidArgument("unknown dtype \"" + std::string(name) + "\"" + DidYouMean(name, names) +
                        "; expected one of " + Join(names, ", "));
}

DLPackTypeCode ToDLPackType(DType dtype) {
  const Info& i = InfoOf(dtype);
  return {i.dl_code, static_cast<uint8_t>(i.size * 8), 1};
}

DType FromDLPackType(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes == 1) {
    for (const Info& i : kInfo) {
      if (i.dl_code == code && i.size * 8 == bits) return i.dtype;
    }
  }
  throw InteropError("DLPack dtype: expected one of bool/int/uint/float/bfloat with 1 lane and 8-64 "
                     "bits, got code " + std::to_string(code) + " bits " + std::to_string(bits) +
                     " lanes " + std::to_string(lanes));
}

std::string ToNumpyTypestr(DType dtype) {
  const Info& i = InfoOf(dtype);
  if (i.typestr == nullptr) {
    throw InteropError("CUDA Array Interface: " + std::string(i.name) + " has no NumPy typestr");
  }
  return i.typestr;
}

DType FromNumpyTypestr(std::string_view typestr) {
  if (typestr.size() < 3) {
    throw InteropError("typestr: expected <byteorder><kind><bytes> such as \"<f4\", got \"" +
                       std::string(typestr) + "\"");
  }
  const char order = typestr[0];
  if (order == '>') {
    throw InteropError("typestr \"" + std::string(typestr) +
                       "\": big-endian data is not supported (expected '<' or '|')");
  }
  if (order != '<' && order != '|' && order != '=') {
    throw InteropError("typestr \"" + std::string(typestr) + "\": expected byte order '<', '|' or '=', got '" +
                       std::string(1, order) + "'");
  }
  const char kind = typestr[1];
  const std::string_view bytes = typestr.substr(2);
  for (const Info& i : kInfo) {
    if (i.typestr != nullptr && i.typestr[1] == kind && bytes == std::to_string(i.size)) return i.dtype;
  }
  throw InteropError("typestr \"" + std::string(typestr) +
                     "\": expected kind b, i, u or f with 1, 2, 4 or 8 bytes (no complex, no bfloat)");
}

}  // namespace conveyor
