// Helpers shared by the DLPack and CUDA Array Interface importers (not a public header).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor/shape.h"

namespace conveyor::interop {

// The bytes a strided view reaches, relative to its first element.
struct Span {
  int64_t lowest_byte = 0;  // <= 0: negative strides reach below the first element
  size_t bytes = 0;         // 0 for a tensor with no elements
};

// Throws InteropError naming `what` for a negative extent or extents whose product overflows
// int64 (checked before RowMajorStrides or num_elements, which would overflow).
void CheckExtents(const Shape& shape, const char* what);

// Throws InteropError naming `what` and the offending field for negative extents and for sizes
// that overflow 64 bits.
Span ComputeSpan(const Shape& shape, const Shape& strides, size_t item_size, const char* what);

}  // namespace conveyor::interop
