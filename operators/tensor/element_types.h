// Type switches shared by the CPU references (.cc) and kernels (.cu) of one_hot and lookup_table.
// Plain header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor/dtype.h"

namespace conveyor::ops {

// The integer dtypes that hold class indices and table keys.
inline constexpr DType kIndexDTypes[] = {DType::kUInt8, DType::kInt8,  DType::kUInt16,
                                         DType::kInt16, DType::kInt32, DType::kInt64};

// Calls f(T{}) with the C++ type of an index dtype; returns false for any other dtype.
template <typename F>
bool DispatchIndexType(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kInt8: f(int8_t{}); return true;
    case DType::kUInt16: f(uint16_t{}); return true;
    case DType::kInt16: f(int16_t{}); return true;
    case DType::kInt32: f(int32_t{}); return true;
    case DType::kInt64: f(int64_t{}); return true;
    default: return false;
  }
}

// Calls f(W{}) with the unsigned word of an element size (1, 2, 4, 8): outputs written as bits.
template <typename F>
void DispatchElementWord(int64_t size, F&& f) {
  switch (size) {
    case 1: f(uint8_t{}); return;
    case 2: f(uint16_t{}); return;
    case 4: f(uint32_t{}); return;
    default: f(uint64_t{}); return;
  }
}

// f(in, out) with `in` typed as the index dtype and `out` as the word of the output element size.
template <typename F>
void DispatchIndexAndWord(DType in_type, const void* in, int64_t out_size, void* out, F&& f) {
  DispatchIndexType(in_type, [&](auto in_tag) {
    DispatchElementWord(out_size, [&](auto word_tag) {
      f(static_cast<const decltype(in_tag)*>(in), static_cast<decltype(word_tag)*>(out));
    });
  });
}

}  // namespace conveyor::ops
