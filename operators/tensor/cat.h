// cat and stack move bytes only: every input of a sample is `rows` contiguous runs of `row_bytes`
// bytes that land `dst_pitch` bytes apart in the output. For cat along `axis`, rows is the product
// of the extents before `axis` and row_bytes the product of the rest times the element size;
// stack is cat of the inputs with an extent-1 axis inserted at `axis`. Plain functions, no CUDA
// syntax.
//
// | what   | contract                                                                        |
// |--------|---------------------------------------------------------------------------------|
// | pieces | one per (sample, input); any dtype (bytes), any alignment (the GPU picks the     |
// |        | widest word, up to 16 bytes, that divides the addresses, row_bytes and pitch)   |
// | result | bit-identical on CPU and GPU                                                    |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/shape.h"

namespace conveyor::ops {

struct CatPiece {
  const void* src;
  void* dst;  // the piece's first byte in the output sample
  int64_t rows;
  int64_t row_bytes;
  int64_t dst_pitch;
};

// The n pieces of one output sample at `out` into pieces[0..n): input k has shape shapes[k] (all
// with `axis`, equal elsewhere) and its data at srcs[k].
void PlanCat(const Shape* shapes, const void* const* srcs, int n, void* out, int axis, size_t element_size,
             CatPiece* pieces);

void CatCpu(const CatPiece& piece);
// `pieces`: n device-readable pieces; `max_piece_bytes_hint` (from capacities) only sizes the grid.
void CatGpu(const CatPiece* pieces, int n, int64_t max_piece_bytes_hint, cuda::StreamView stream);

}  // namespace conveyor::ops
