#include "core/tensor/shape.h"

#include "core/error.h"

namespace conveyor {

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

Shape::Shape(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) push_back(d);
}

void Shape::push_back(int64_t d) {
  if (ndim_ == kMaxDims) {
    throw InvalidArgument("Shape: at most " + std::to_string(kMaxDims) + " dimensions are supported");
  }
  dims_[static_cast<size_t>(ndim_++)] = d;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : *this) n *= d;
  return n;
}

std::string Shape::ToString() const {
  std::string s = "(";
  for (int i = 0; i < ndim_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[static_cast<size_t>(i)]);
  }
  if (ndim_ == 1) s += ",";
  return s + ")";
}

Shape RowMajorStrides(const Shape& shape) {
  Shape strides = shape;
  int64_t stride = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

Layout::Layout(std::string_view s) : name_(s) {
  if (name_.size() > static_cast<size_t>(Shape::kMaxDims)) {
    throw InvalidArgument("layout \"" + name_ + "\": expected at most " +
                          std::to_string(Shape::kMaxDims) + " axes");
  }
  for (size_t i = 0; i < name_.size(); ++i) {
    if (name_.find(name_[i], i + 1) != std::string::npos) {
      throw InvalidArgument("layout \"" + name_ + "\": axis '" + std::string(1, name_[i]) +
                            "' appears twice");
    }
  }
}

int Layout::find(char axis) const {
  const size_t i = name_.find(axis);
  return i == std::string::npos ? -1 : static_cast<int>(i);
}

}  // namespace conveyor
