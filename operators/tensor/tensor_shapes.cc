#include "operators/tensor/tensor_shapes.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace conveyor::ops {

namespace {

std::string ListText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Shape CheckedShape(const std::vector<int64_t>& extents) {
  if (extents.size() > static_cast<size_t>(Shape::kMaxDims)) {
    throw InvalidArgument("the output would have " + std::to_string(extents.size()) + " dims, at most " +
                          std::to_string(Shape::kMaxDims) + " are supported");
  }
  return Shape(extents);
}

}  // namespace

int NormalizeAxis(int64_t axis, int ndim, const std::string& what) {
  if (axis < -ndim || axis >= ndim) {
    throw InvalidArgument(what + ": axis " + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                          " dims (expected " + std::to_string(-ndim) + ".." + std::to_string(ndim - 1) + ")");
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<int> NormalizeAxes(const std::vector<int64_t>& axes, int ndim, const std::string& what) {
  std::vector<int> out;
  for (int64_t a : axes) out.push_back(NormalizeAxis(a, ndim, what));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i] == out[i - 1]) {
      throw InvalidArgument(what + ": axis " + std::to_string(out[i]) + " is listed twice in " + ListText(axes));
    }
  }
  return out;
}

std::vector<int> AxesOfNames(const std::string& names, const std::string& layout, const std::string& what) {
  std::vector<int64_t> axes;
  for (char c : names) {
    const size_t at = layout.find(c);
    if (at == std::string::npos) {
      throw InvalidArgument(what + ": axis '" + std::string(1, c) + "' is not in the input layout \"" + layout + "\"");
    }
    axes.push_back(static_cast<int64_t>(at));
  }
  return NormalizeAxes(axes, static_cast<int>(layout.size()), what);
}

Shape InferExtents(const Shape& in, const std::vector<int64_t>& extents) {
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else if (extents[i] < 0) {
      throw InvalidArgument("shape " + ListText(extents) + ": expected extents >= 0 and at most one -1");
    } else if (__builtin_mul_overflow(known, extents[i], &known)) {
      throw InvalidArgument("shape " + ListText(extents) + " has more elements than an int64 counts");
    }
  }
  std::vector<int64_t> out = extents;
  const int64_t volume = in.num_elements();
  if (inferred >= 0) {
    if (known == 0 ? volume != 0 : volume % known != 0) {
      throw InvalidArgument("shape " + ListText(extents) + ": no extent for -1 gives the input's " +
                            std::to_string(volume) + " elements (input shape " + in.ToString() + ")");
    }
    out[static_cast<size_t>(inferred)] = known == 0 ? 0 : volume / known;
  } else if (known != volume) {
    throw InvalidArgument("shape " + ListText(extents) + " has " + std::to_string(known) + " elements, the input " +
                          in.ToString() + " has " + std::to_string(volume));
  }
  return CheckedShape(out);
}

std::vector<int64_t> RelativeExtents(const Shape& in, const std::vector<double>& rel,
                                     const std::vector<int64_t>& src_dims) {
  if (!src_dims.empty() && src_dims.size() != rel.size()) {
    throw InvalidArgument("rel_shape has " + std::to_string(rel.size()) + " entries, src_dims " +
                          std::to_string(src_dims.size()) + "; expected one source dim per entry");
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < rel.size(); ++i) {
    if (rel[i] < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t src = src_dims.empty() ? static_cast<int64_t>(i) : src_dims[i];
    if (src < 0 || src >= in.ndim()) {
      throw InvalidArgument("rel_shape entry " + std::to_string(i) + " scales input dim " + std::to_string(src) +
                            ", but the input " + in.ToString() + " has " + std::to_string(in.ndim()) + " dims");
    }
    out.push_back(static_cast<int64_t>(std::llround(static_cast<double>(in[static_cast<int>(src)]) * rel[i])));
  }
  return out;
}

std::vector<int64_t> SourceDimExtents(const Shape& in, const std::vector<int64_t>& src_dims) {
  std::vector<int64_t> out;
  for (int64_t src : src_dims) {
    if (src < -1 || src >= in.ndim()) {
      throw InvalidArgument("src_dims " + ListText(src_dims) + ": dim " + std::to_string(src) +
                            " is not in the input " + in.ToString() + " (expected -1 or 0.." +
                            std::to_string(in.ndim() - 1) + ")");
    }
    out.push_back(src == -1 ? 1 : in[static_cast<int>(src)]);
  }
  return out;
}

Shape SqueezedShape(const Shape& in, const std::vector<int>& axes) {
  std::vector<int64_t> out;
  size_t next = 0;
  for (int d = 0; d < in.ndim(); ++d) {
    if (next < axes.size() && axes[next] == d) {
      if (in[d] != 1) {
        throw InvalidArgument("axis " + std::to_string(d) + " of shape " + in.ToString() + " has extent " +
                              std::to_string(in[d]) + ", expected 1 to squeeze it");
      }
      ++next;
      continue;
    }
    out.push_back(in[d]);
  }
  return Shape(out);
}

Shape ExpandedShape(const Shape& in, const std::vector<int>& axes) {
  std::vector<int64_t> out;
  size_t next = 0;
  int src = 0;
  const int ndim = in.ndim() + static_cast<int>(axes.size());
  for (int d = 0; d < ndim; ++d) {
    if (next < axes.size() && axes[next] == d) {
      out.push_back(1);
      ++next;
    } else {
      out.push_back(in[src++]);
    }
  }
  return CheckedShape(out);
}

std::string LayoutWithout(const std::string& layout, const std::vector<int>& axes) {
  if (layout.empty()) return "";
  std::string out;
  for (size_t d = 0; d < layout.size(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int>(d))) out += layout[d];
  }
  return out;
}

std::string LayoutWith(const std::string& layout, const std::vector<int>& axes, const std::string& names) {
  std::string out;
  size_t next = 0, src = 0;
  const size_t ndim = layout.size() + axes.size();
  for (size_t d = 0; d < ndim; ++d) {
    if (next < axes.size() && static_cast<size_t>(axes[next]) == d) {
      out += names[next++];
    } else {
      out += layout[src++];
    }
  }
  return out;
}

Shape ConcatenatedShape(const std::vector<Shape>& shapes, int axis) {
  Shape out = shapes.at(0);
  for (size_t k = 1; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    bool same = s.ndim() == out.ndim();
    for (int d = 0; same && d < s.ndim(); ++d) same = d == axis || s[d] == shapes[0][d];
    if (!same) {
      throw InvalidArgument("input " + std::to_string(k) + " has shape " + s.ToString() + ", input 0 " +
                            shapes[0].ToString() + "; expected the same extents except on axis " +
                            std::to_string(axis));
    }
    out[axis] += s[axis];
  }
  return out;
}

Shape StackedShape(const std::vector<Shape>& shapes, int axis) {
  for (size_t k = 1; k < shapes.size(); ++k) {
    if (!(shapes[k] == shapes[0])) {
      throw InvalidArgument("input " + std::to_string(k) + " has shape " + shapes[k].ToString() + ", input 0 " +
                            shapes[0].ToString() + "; stacked inputs must have the same shape");
    }
  }
  std::vector<int64_t> out = shapes.at(0).ToVector();
  out.insert(out.begin() + axis, static_cast<int64_t>(shapes.size()));
  return CheckedShape(out);
}

}  // namespace conveyor::ops
