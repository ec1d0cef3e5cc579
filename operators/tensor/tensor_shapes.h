// Shape and layout rules of the tensor operators (reshape, squeeze, expand_dims, cat, stack,
// one_hot): plain functions, no framework. Each throws InvalidArgument with the bare reason
// ("shape (3, 5) has 15 elements, the input (4, 4) has 16"); the operator adds the node and the
// sample (ForSample, tensor_op.h).
//
// | function          | rule (DALI's)                                                           |
// |-------------------|-------------------------------------------------------------------------|
// | InferExtents      | at most one -1 extent, inferred so the element count stays the same     |
// | RelativeExtents   | out[i] = round(in[src[i]] * rel[i]) (src = src_dims or i); rel < 0: -1  |
// | SourceDimExtents  | out[i] = in[src_dims[i]]; -1 inserts an extent-1 axis                   |
// | SqueezedShape     | drops `axes` (each of extent 1)                                         |
// | ExpandedShape     | inserts extent-1 axes at output positions `axes`                        |
// | ConcatenatedShape | extents equal except `axis`, which adds up                              |
// | StackedShape      | equal shapes; a new axis of extent `count` at `axis`                    |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/shape.h"

namespace conveyor::ops {

// `axis` in [-ndim, ndim) → [0, ndim); `what` names the argument in the message.
int NormalizeAxis(int64_t axis, int ndim, const std::string& what);
// Normalizes every axis and sorts them; throws for repeats.
std::vector<int> NormalizeAxes(const std::vector<int64_t>& axes, int ndim, const std::string& what);
// The axes of `names` in `layout` (sorted); throws for letters the layout lacks.
std::vector<int> AxesOfNames(const std::string& names, const std::string& layout, const std::string& what);

// `extents` with at most one -1, which becomes what keeps `in`'s element count.
Shape InferExtents(const Shape& in, const std::vector<int64_t>& extents);
std::vector<int64_t> RelativeExtents(const Shape& in, const std::vector<double>& rel,
                                     const std::vector<int64_t>& src_dims);
std::vector<int64_t> SourceDimExtents(const Shape& in, const std::vector<int64_t>& src_dims);

// `axes` normalized and sorted (NormalizeAxes).
Shape SqueezedShape(const Shape& in, const std::vector<int>& axes);
Shape ExpandedShape(const Shape& in, const std::vector<int>& axes);
// The layout without / with letters at `axes` ("" stays "").
std::string LayoutWithout(const std::string& layout, const std::vector<int>& axes);
std::string LayoutWith(const std::string& layout, const std::vector<int>& axes, const std::string& names);

// `shapes` are one sample's inputs; `axis` normalized. Messages name the input index.
Shape ConcatenatedShape(const std::vector<Shape>& shapes, int axis);
Shape StackedShape(const std::vector<Shape>& shapes, int axis);

}  // namespace conveyor::ops
