#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "operators/transpose/transpose.h"

namespace conveyor::ops {
namespace {

// Walks the output in row-major order with an odometer over the output coordinates, moving the
// input offset by the permuted input strides.
template <typename T>
void TransposeTyped(const T* in, T* out, const Shape& in_shape, const std::vector<int>& perm) {
  const int n = in_shape.ndim();
  const int64_t count = in_shape.num_elements();
  if (count == 0) return;
  const Shape in_strides = RowMajorStrides(in_shape);
  int64_t extent[Shape::kMaxDims], stride[Shape::kMaxDims], coord[Shape::kMaxDims] = {};
  for (int d = 0; d < n; ++d) {
    extent[d] = in_shape[perm[static_cast<size_t>(d)]];
    stride[d] = in_strides[perm[static_cast<size_t>(d)]];
  }
  int64_t src = 0;
  for (int64_t e = 0; e < count; ++e) {
    out[e] = in[src];
    for (int d = n - 1; d >= 0; --d) {  // advance the odometer
      src += stride[d];
      if (++coord[d] < extent[d]) break;
      src -= stride[d] * extent[d];
      coord[d] = 0;
    }
  }
}

}  // namespace

Shape TransposedShape(const Shape& in_shape, const std::vector<int>& perm) {
  Shape out;
  for (int p : perm) out.push_back(in_shape[p]);
  return out;
}

void TransposeCpu(const void* in, void* out, const Shape& in_shape, const std::vector<int>& perm,
                  size_t element_size) {
  switch (element_size) {
    case 1: return TransposeTyped(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), in_shape, perm);
    case 2: return TransposeTyped(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), in_shape, perm);
    case 4: return TransposeTyped(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), in_shape, perm);
    case 8: return TransposeTyped(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), in_shape, perm);
    default: throw InvalidArgument("TransposeCpu: element size " + std::to_string(element_size) + " not supported");
  }
}

TransposeSample PlanTranspose(const Shape& in_shape, const std::vector<int>& perm) {
  TransposeSample s{};
  s.count = in_shape.num_elements();
  s.kind = TransposeKind::kCopy;
  s.ndim = 1;
  s.out_shape[0] = s.count;
  s.in_stride[0] = 1;
  if (s.count == 0) return s;
  // 1. Drop extent-1 input axes; `order` = the output's input axes, renumbered 0..m-1.
  const int n = in_shape.ndim();
  int new_index[Shape::kMaxDims];
  int m = 0;
  for (int a = 0; a < n; ++a) new_index[a] = in_shape[a] == 1 ? -1 : m++;
  std::vector<int> order;
  for (int p : perm) {
    if (new_index[p] >= 0) order.push_back(new_index[p]);
  }
  std::vector<int64_t> kept;
  for (int a = 0; a < n; ++a) {
    if (in_shape[a] != 1) kept.push_back(in_shape[a]);
  }
  // 2. Merge runs of output axes that are consecutive input axes: groups in output order, each
  // named by its first input axis.
  std::vector<int> group_first;  // first input axis of each output group
  std::vector<int64_t> group_extent;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && order[k] == order[k - 1] + 1) {
      group_extent.back() *= kept[static_cast<size_t>(order[k])];
    } else {
      group_first.push_back(order[k]);
      group_extent.push_back(kept[static_cast<size_t>(order[k])]);
    }
  }
  const int g = static_cast<int>(group_first.size());
  if (g <= 1) return s;  // identity after collapsing: a copy
  // 3. Input strides of the groups: the input holds the groups sorted by first axis.
  std::vector<int> by_input(static_cast<size_t>(g));
  for (int i = 0; i < g; ++i) by_input[static_cast<size_t>(i)] = i;
  std::sort(by_input.begin(), by_input.end(),
            [&](int a, int b) { return group_first[static_cast<size_t>(a)] < group_first[static_cast<size_t>(b)]; });
  int64_t stride = 1;
  for (int i = g - 1; i >= 0; --i) {
    const int grp = by_input[static_cast<size_t>(i)];
    s.in_stride[grp] = stride;
    stride *= group_extent[static_cast<size_t>(grp)];
  }
  s.ndim = g;
  for (int d = 0; d < g; ++d) s.out_shape[d] = group_extent[static_cast<size_t>(d)];
  s.kind = g == 2 ? TransposeKind::kTranspose2d : TransposeKind::kGeneral;
  return s;
}

}  // namespace conveyor::ops
