#include "core/interop/interop_util.h"

#include <string>

#include "core/error.h"

namespace conveyor::interop {
namespace {

[[noreturn]] void Overflow(const char* what, const Shape& shape, const Shape& strides) {
  throw InteropError(std::string(what) + ": shape: extents " + shape.ToString() + " with strides " +
                     strides.ToString() + " overflow 64-bit byte offsets");
}

}  // namespace

void CheckExtents(const Shape& shape, const char* what) {
  int64_t product = 1;  // of max(extent, 1): bounds both the element count and row-major strides
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] < 0) {
      throw InteropError(std::string(what) + ": shape[" + std::to_string(i) +
                         "]: expected an extent >= 0, got " + std::to_string(shape[i]));
    }
    if (__builtin_mul_overflow(product, shape[i] > 1 ? shape[i] : 1, &product)) {
      throw InteropError(std::string(what) + ": shape: extents " + shape.ToString() +
                         " hold more than 2^63 elements");
    }
  }
}

Span ComputeSpan(const Shape& shape, const Shape& strides, size_t item_size, const char* what) {
  CheckExtents(shape, what);
  if (shape.num_elements() == 0) return {};
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < shape.ndim(); ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach)) Overflow(what, shape, strides);
    if (__builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      Overflow(what, shape, strides);
    }
  }
  const int64_t size = static_cast<int64_t>(item_size);
  int64_t lowest = 0, extent = 0;
  if (__builtin_mul_overflow(lo, size, &lowest) || __builtin_sub_overflow(hi, lo, &extent) ||
      __builtin_add_overflow(extent, 1, &extent) || __builtin_mul_overflow(extent, size, &extent)) {
    Overflow(what, shape, strides);
  }
  return {lowest, static_cast<size_t>(extent)};
}

}  // namespace conveyor::interop
