// What the tests of pipelines/detection_train.yaml share: its saved outputs (`conveyor run
// --save-outputs`, one .npy per batch, or one per sample when the shapes differ) read back per
// sample, and the anchors the file passes to box_encoder.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor/half.h"
#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {

inline constexpr char kDetectionYaml[] = "pipelines/detection_train.yaml";

struct SampleArray {
  Shape shape;               // the sample's shape (without the batch axis)
  std::vector<double> data;  // the values, converted
};

inline std::vector<double> ToDoubles(DType dtype, const char* p, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kFloat32: { float f; std::memcpy(&f, p + 4 * i, 4); v[i] = f; break; }
      case DType::kFloat16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); v[i] = HalfBitsToFloat(h); break; }
      case DType::kInt32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); v[i] = x; break; }
      case DType::kInt64: { int64_t x; std::memcpy(&x, p + 8 * i, 8); v[i] = static_cast<double>(x); break; }
      default: ADD_FAILURE() << "unexpected dtype"; return v;
    }
  }
  return v;
}

// Output `name` of iteration `it` as `batch` samples: from NAME_IIIIII.npy (uniform batch) or
// NAME_IIIIII_SSSS.npy (one file per sample).
inline std::vector<SampleArray> LoadSamples(const std::string& dir, const std::string& name, int it, int batch) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "_%06d", it);
  const std::string whole = dir + "/" + name + suffix + ".npy";
  std::vector<SampleArray> out;
  if (std::filesystem::exists(whole)) {
    const std::string bytes = ReadText(whole);
    const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), whole);
    EXPECT_EQ(h.shape[0], batch) << whole;
    Shape sample(h.shape.begin() + 1, h.shape.end());
    const int64_t n = sample.num_elements();
    for (int s = 0; s < batch; ++s) {
      out.push_back({sample, ToDoubles(h.dtype, bytes.data() + h.data_offset + s * n * DTypeSize(h.dtype), n)});
    }
    return out;
  }
  for (int s = 0; s < batch; ++s) {
    char sample_suffix[16];
    std::snprintf(sample_suffix, sizeof(sample_suffix), "_%04d", s);
    const std::string path = dir + "/" + name + suffix + sample_suffix + ".npy";
    const std::string bytes = ReadText(path);
    if (bytes.empty()) {
      ADD_FAILURE() << "missing " << path;
      return {};
    }
    const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), path);
    out.push_back({h.shape, ToDoubles(h.dtype, bytes.data() + h.data_offset, h.shape.num_elements())});
  }
  return out;
}

// The numbers of the YAML's `anchors: [...]` list (ltrb, 4 per anchor).
inline std::vector<double> YamlAnchors() {
  const std::string text = ReadText(kDetectionYaml);
  const size_t at = text.find("anchors: [");
  if (at == std::string::npos) return {};
  std::vector<double> v;
  const char* p = text.c_str() + at + std::strlen("anchors: [");
  while (*p && *p != ']') {
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end != p) {
      v.push_back(x);
      p = end;
    } else {
      ++p;
    }
  }
  return v;
}

}  // namespace conveyor::cli_test
