// PlanBroadcast (math.h): NumPy's rule per sample, then the dims collapsed so the kernel splits
// the element index into as few coordinates as possible (none when every operand is same-shape
// or scalar).
#include <algorithm>

#include "core/error.h"
#include "operators/math/math.h"

namespace conveyor::ops {

namespace {

// The broadcast extents, right-aligned; throws naming the first input that does not fit.
std::vector<int64_t> BroadcastExtents(const std::vector<Shape>& shapes, const std::vector<std::string>& names) {
  int ndim = 0;
  for (const Shape& s : shapes) ndim = std::max(ndim, s.ndim());
  std::vector<int64_t> out(static_cast<size_t>(ndim), 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    std::vector<int64_t> before = out;
    for (int d = 0; d < s.ndim(); ++d) {
      const size_t at = static_cast<size_t>(ndim - s.ndim() + d);
      const int64_t e = s[d];
      if (e == 1 || e == out[at]) continue;
      if (out[at] != 1) {
        throw InvalidArgument("cannot broadcast " + names[k] + " of shape " + s.ToString() + " with shape " +
                              Shape(before).ToString() + " of the inputs before it: dim " + std::to_string(d) + " is " +
                              std::to_string(e) + " here, " + std::to_string(out[at]) + " there");
      }
      out[at] = e;
    }
  }
  return out;
}

}  // namespace

Shape PlanBroadcast(const std::vector<Shape>& shapes, const std::vector<std::string>& names, MathSample& sample,
                    MathOperand* operands) {
  const std::vector<int64_t> extents = BroadcastExtents(shapes, names);
  const int ndim = static_cast<int>(extents.size());
  const size_t n = shapes.size();
  // Per operand, its stride along every output dim (0 where it repeats).
  std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(static_cast<size_t>(ndim), 0));
  for (size_t k = 0; k < n; ++k) {
    const Shape& s = shapes[k];
    int64_t stride = 1;
    for (int d = s.ndim() - 1; d >= 0; --d) {
      if (s[d] != 1) strides[k][static_cast<size_t>(ndim - s.ndim() + d)] = stride;
      stride *= s[d];
    }
  }
  // Collapse: drop extent-1 dims, merge a dim into the previous kept one when every operand walks
  // the pair as one run.
  std::vector<int64_t> ext;
  std::vector<std::vector<int64_t>> st(n);
  for (int d = 0; d < ndim; ++d) {
    const int64_t e = extents[static_cast<size_t>(d)];
    if (e == 1) continue;
    bool merge = !ext.empty();
    for (size_t k = 0; merge && k < n; ++k) merge = st[k].back() == strides[k][static_cast<size_t>(d)] * e;
    if (merge) {
      ext.back() *= e;
      for (size_t k = 0; k < n; ++k) st[k].back() = strides[k][static_cast<size_t>(d)];
      continue;
    }
    ext.push_back(e);
    for (size_t k = 0; k < n; ++k) st[k].push_back(strides[k][static_cast<size_t>(d)]);
  }
  sample.ndim = static_cast<int32_t>(ext.size());
  sample.count = 1;
  for (int64_t e : ext) sample.count *= e;
  sample.strided = 0;
  std::copy(ext.begin(), ext.end(), sample.extents);
  for (size_t k = 0; k < n; ++k) {
    MathOperand& o = operands[k];
    o.data = nullptr;
    o.unused = 0;
    std::fill(std::begin(o.strides), std::end(o.strides), 0);
    std::copy(st[k].begin(), st[k].end(), o.strides);
    bool scalar = true, same = true;
    int64_t row_major = 1;
    for (int d = sample.ndim - 1; d >= 0; --d) {
      scalar = scalar && st[k][static_cast<size_t>(d)] == 0;
      same = same && st[k][static_cast<size_t>(d)] == row_major;
      row_major *= ext[static_cast<size_t>(d)];
    }
    o.mode = scalar ? kOperandScalar : same ? kOperandSame : kOperandStrided;
    if (o.mode == kOperandStrided) sample.strided = 1;
  }
  return Shape(extents);
}

}  // namespace conveyor::ops
