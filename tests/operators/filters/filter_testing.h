// What the filter tests share: the spec, random per-sample filters and anchors, the border names.
#pragma once

#include <string>
#include <vector>

#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {

inline const std::vector<std::string> kFilterBorders = {"reflect_101", "reflect_1001", "wrap", "clamp", "constant"};

inline OpSpec FilterSpec() { return OpSpec("filter", "f").AddInput("x").AddOutput("y"); }

// A float32 [fh, fw] filter per sample, extents in [1, max_extent], values in [-1, 1).
inline TensorListCPU RandomFilters(int n, int max_extent) {
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;
  for (int i = 0; i < n; ++i) {
    const int fh = RandomVector<int>(1, 1, max_extent)[0], fw = RandomVector<int>(1, 1, max_extent)[0];
    shapes.push_back(Shape{fh, fw});
    values.push_back(RandomVector<float>(static_cast<size_t>(fh) * fw, -1.f, 1.f));
  }
  return MakeBatch<float>(shapes, values);
}

// A random [ay, ax] per sample inside that sample's filter, or -1 (the centre) for about a third.
inline TensorListCPU RandomAnchors(const TensorListCPU& filters) {
  std::vector<std::vector<int32_t>> anchors;
  for (int i = 0; i < filters.num_samples(); ++i) {
    std::vector<int32_t> a;
    for (int axis = 0; axis < 2; ++axis) {
      const int extent = static_cast<int>(filters.shape(i)[axis]);
      a.push_back(RandomVector<int>(1, 0, 2)[0] == 0 ? -1 : RandomVector<int>(1, 0, extent - 1)[0]);
    }
    anchors.push_back(a);
  }
  return PerSampleLists<int32_t>(anchors);
}

}  // namespace conveyor::testing
