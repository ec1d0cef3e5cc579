// Helpers for the math operator tests: a spec over named inputs, and the rounding of a float
// result to the dtype the output holds (computed here, not by the operator's code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/operators/tensor/tensor_testing.h"

namespace conveyor::testing {

inline OpSpec Math(const std::string& expr, const std::vector<std::string>& inputs = {"x"}) {
  OpSpec spec("math", "m");
  for (const std::string& name : inputs) spec.AddInput(name);
  return spec.AddOutput("y").SetArg("expr", expr);
}

// A float32 result stored as `type` (float16 / bfloat16 round to nearest even), as a double.
inline double StoredFloat(float v, DType type) {
  switch (type) {
    case DType::kFloat16: return HalfBitsToFloat(FloatToHalfBits(v));
    case DType::kBFloat16: return BFloat16BitsToFloat(FloatToBFloat16Bits(v));
    default: return v;
  }
}

// `v` modulo 2^bits of an integer dtype, moved into its range (bool: nonzero), as a double.
inline double Wrapped(int64_t v, DType type) {
  if (type == DType::kBool) return v != 0;
  if (type == DType::kInt64) return static_cast<double>(v);
  const int bits = static_cast<int>(DTypeSize(type)) * 8;
  const int64_t period = int64_t{1} << bits;
  int64_t r = ((v % period) + period) % period;
  const bool is_signed = type == DType::kInt8 || type == DType::kInt16 || type == DType::kInt32;
  if (is_signed && r >= period / 2) r -= period;
  return static_cast<double>(r);
}

inline bool IsFloat(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}

}  // namespace conveyor::testing
