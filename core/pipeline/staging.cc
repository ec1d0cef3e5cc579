#include "core/pipeline/staging.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace conveyor::pipeline_internal {

size_t BatchBytes(const std::vector<Shape>& shapes, DType dtype) {
  constexpr size_t kSampleAlignment = 16;  // TensorList's per-sample alignment
  size_t at = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    for (int64_t d : s) {
      if (d < 0) {
        throw InvalidArgument("sample " + std::to_string(i) + " has a negative extent in shape " + s.ToString());
      }
    }
    at += static_cast<size_t>(s.num_elements()) * DTypeSize(dtype);
    at = (at + kSampleAlignment - 1) / kSampleAlignment * kSampleAlignment;
  }
  return at;
}

size_t CapacityFor(size_t bytes, size_t previous) {
  constexpr size_t kGranule = 256;
  const size_t capacity = std::max(bytes + bytes / 8, previous + previous / 4);
  return std::max(kGranule, (capacity + kGranule - 1) / kGranule * kGranule);
}

}  // namespace conveyor::pipeline_internal
