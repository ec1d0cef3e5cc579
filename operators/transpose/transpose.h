// transpose: out[i_0, ..., i_{n-1}] = in[j] with j[perm[d]] = i_d, i.e. output axis d is input
// axis perm[d] (DALI's meaning). Elements are moved as raw bytes. Plain functions, no CUDA syntax.
//
// | in                 | perm                      | out shape              | element sizes |
// |--------------------|---------------------------|------------------------|---------------|
// | any dtype, 0..8    | a permutation of          | out[d] = in[perm[d]]   | 1, 2, 4, 8    |
// | dims per sample    | 0..ndim-1                 |                        | bytes         |
//
// The GPU plan of a sample (PlanTranspose) first drops extent-1 axes and merges runs of axes that
// stay adjacent and in order, so HWC→CHW becomes the 2-D transpose [H*W, C] → [C, H*W]. Then:
//
// | kind        | when                             | kernel path                                  |
// |-------------|----------------------------------|----------------------------------------------|
// | kCopy       | the collapsed perm is identity   | 16-byte vector copy                          |
// | kTranspose2d| collapsed to 2 axes, swapped     | narrow side (<= 16 bytes per row): linear    |
// |             |                                  | 16-byte tile loads/stores through shared     |
// |             |                                  | memory; else 32x32 shared-memory tiles       |
// | kGeneral    | anything else (3..8 axes)        | per-element index arithmetic                 |
//
// Every path moves the same bytes the CPU reference moves: results are bit-identical.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cuda/stream.h"
#include "core/tensor/shape.h"

namespace conveyor::ops {

enum class TransposeKind : int32_t { kCopy, kTranspose2d, kGeneral };

struct TransposeSample {
  const void* in;
  void* out;
  int64_t count;  // elements
  TransposeKind kind;
  int32_t ndim;  // collapsed axes (kGeneral); kTranspose2d: 2
  // Collapsed output extents and, per output axis, the input stride (elements) it walks.
  // kTranspose2d: the input is [rows, cols] = [out_shape[1], out_shape[0]].
  int64_t out_shape[Shape::kMaxDims];
  int64_t in_stride[Shape::kMaxDims];
};

// The sample's plan (in/out left null). `perm` must be a permutation of 0..in_shape.ndim()-1.
TransposeSample PlanTranspose(const Shape& in_shape, const std::vector<int>& perm);

// out shape: out[d] = in[perm[d]].
Shape TransposedShape(const Shape& in_shape, const std::vector<int>& perm);

// The CPU reference on the uncollapsed axes (independent of PlanTranspose).
void TransposeCpu(const void* in, void* out, const Shape& in_shape, const std::vector<int>& perm,
                  size_t element_size);

// `samples`: n device-readable plans. `max_count_hint` (from capacities) only sizes the grid.
void TransposeGpu(const TransposeSample* samples, int n, int64_t max_count_hint, size_t element_size,
                  cuda::StreamView stream);

}  // namespace conveyor::ops
