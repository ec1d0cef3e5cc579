// DType: the element types Conveyor moves, with names, sizes, and the DLPack / NumPy spellings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace conveyor {

enum class DType : uint8_t {
  kBool,
  kUInt8,
  kInt8,
  kUInt16,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

inline constexpr DType kAllDTypes[] = {DType::kBool,    DType::kUInt8,    DType::kInt8,
                                       DType::kUInt16,  DType::kInt16,    DType::kInt32,
                                       DType::kInt64,   DType::kFloat16,  DType::kBFloat16,
                                       DType::kFloat32, DType::kFloat64};

// "bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "bfloat16", "float32",
// "float64".
std::string_view DTypeName(DType dtype);
size_t DTypeSize(DType dtype);
bool IsFloatingPoint(DType dtype);

// Parses a name above (also "u8", "f32", "half", "float", "double" and friends). Throws
// InvalidArgument listing the accepted names, with a suggestion when one is close.
DType ParseDType(std::string_view name);

// DLPack type codes: Int 0, UInt 1, Float 2, Bfloat 4, Bool 6.
struct DLPackTypeCode {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
DLPackTypeCode ToDLPackType(DType dtype);
// Throws InteropError naming the code/bits/lanes when Conveyor has no such type.
DType FromDLPackType(uint8_t code, uint8_t bits, uint16_t lanes);

// NumPy typestr: "|b1", "|u1", "|i1", "<u2", "<i2", "<i4", "<i8", "<f2", "<V2"(bf16 is not
// representable: export throws), "<f4", "<f8". Import accepts '<', '|' and '=' (little-endian
// machine); '>' is rejected with InteropError.
std::string ToNumpyTypestr(DType dtype);
DType FromNumpyTypestr(std::string_view typestr);

template <typename T>
struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUInt16; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };

}  // namespace conveyor
