// Shape (a small vector of int64 extents) and Layout (axis letters such as "HWC").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor {

class Shape {
 public:
  static constexpr int kMaxDims = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  template <typename It>
  Shape(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }

  int ndim() const { return ndim_; }
  bool empty() const { return ndim_ == 0; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + ndim_; }
  const int64_t* data() const { return dims_.data(); }
  void push_back(int64_t d);  // throws InvalidArgument beyond kMaxDims

  // Product of extents (1 for a scalar, 0 when any extent is 0).
  int64_t num_elements() const;
  std::vector<int64_t> ToVector() const { return {begin(), end()}; }
  std::string ToString() const;  // "(3, 224, 224)"

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.ndim_ == b.ndim_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::array<int64_t, kMaxDims> dims_{};
  int ndim_ = 0;
};

// Row-major strides in elements.
Shape RowMajorStrides(const Shape& shape);

class Layout {
 public:
  Layout() = default;
  Layout(const char* s) : Layout(std::string_view(s)) {}
  // Throws InvalidArgument for repeated letters or more than Shape::kMaxDims axes.
  Layout(std::string_view s);

  std::string_view str() const { return name_; }
  int ndim() const { return static_cast<int>(name_.size()); }
  bool empty() const { return name_.empty(); }
  // Index of `axis` or -1.
  int find(char axis) const;
  friend bool operator==(const Layout& a, const Layout& b) { return a.name_ == b.name_; }

 private:
  std::string name_;
};

}  // namespace conveyor
