// The conformance cases of the geometry image operators, one list per operator and device: the
// CPU tests instantiate the CPU cases, geometry_gpu_test the GPU ones (apart, so that a binary
// linking the suite always instantiates it).
#pragma once

#include <string>
#include <vector>

#include "tests/conformance/conformance.h"
#include "tests/operators/geometry/geometry_testing.h"

namespace conveyor::testing {

// The cases of "warp_affine", "rotate" or "jitter" on `device`.
inline std::vector<ConformanceCase> ImageConformanceCases(const std::string& op, Device device) {
  const std::string d = device == Device::kGpu ? "gpu" : "cpu";
  if (op == "warp_affine") {
    return {ConformanceCase{d + "_u8", Warp().SetArg("matrix", std::vector<double>{0.9, 0.2, 1, -0.1, 1.1, -2}), device,
                            DType::kUInt8, true, "HWC", 3},
            ConformanceCase{d + "_f32_cubic_fill",
                            Warp("cubic").SetArg("matrix", std::vector<double>{1, 0.3, 0, 0, 1, 0.5})
                                .SetArg("fill_value", std::vector<double>{0.5}),
                            device, DType::kFloat32, true, "HWC", 3}};
  }
  if (op == "rotate") {
    return {ConformanceCase{d + "_u8", Rotate().SetArg("angle", 30.0), device, DType::kUInt8, true, "HWC", 3},
            ConformanceCase{d + "_f32_nearest_keep", Rotate("nearest").SetArg("angle", -75.0).SetArg("keep_size", true),
                            device, DType::kFloat32, true, "HWC", 3}};
  }
  return {ConformanceCase{d + "_u8", Jitter(), device, DType::kUInt8, true, "HWC", 3},
          ConformanceCase{d + "_hw_f32", Jitter().SetArg("nDegree", 4), device, DType::kFloat32}};
}

}  // namespace conveyor::testing
