#include <cstring>

#include "operators/tensor/cat.h"

namespace conveyor::ops {

void PlanCat(const Shape* shapes, const void* const* srcs, int n, void* out, int axis, size_t element_size,
             CatPiece* pieces) {
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= shapes[0][d];
  int64_t pitch = 0;
  for (int k = 0; k < n; ++k) {
    int64_t bytes = static_cast<int64_t>(element_size);
    for (int d = axis; d < shapes[k].ndim(); ++d) bytes *= shapes[k][d];
    pieces[k] = {srcs[k], static_cast<char*>(out) + pitch, rows, bytes, 0};
    pitch += bytes;
  }
  for (int k = 0; k < n; ++k) pieces[k].dst_pitch = pitch;
}

void CatCpu(const CatPiece& p) {
  if (p.rows == 0 || p.row_bytes == 0) return;
  const char* src = static_cast<const char*>(p.src);
  char* dst = static_cast<char*>(p.dst);
  if (p.row_bytes == p.dst_pitch) {
    std::memcpy(dst, src, static_cast<size_t>(p.rows * p.row_bytes));
    return;
  }
  for (int64_t r = 0; r < p.rows; ++r) {
    std::memcpy(dst + r * p.dst_pitch, src + r * p.row_bytes, static_cast<size_t>(p.row_bytes));
  }
}

}  // namespace conveyor::ops
