#include "tests/cli/shipped_pipelines.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "core/tensor/half.h"
#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {

const std::string& SampleData() {
  static const std::string dir = [] {
    const std::string d = MakeTempDir("sample_data");
    const std::string command = "tools/make_sample_data/make_sample_data '" + d + "' >'" + d + ".log' 2>&1";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("make_sample_data failed: " + ReadText(d + ".log"));
    setenv("CONVEYOR_DATA", (d + "/samples").c_str(), 1);
    setenv("CONVEYOR_NPY_DATA", (d + "/samples_npy").c_str(), 1);
    setenv("CONVEYOR_TFRECORD_DATA", (d + "/tfrecord").c_str(), 1);
    setenv("CONVEYOR_WEBDATASET_DATA", (d + "/webdataset").c_str(), 1);
    setenv("CONVEYOR_COCO_DATA", (d + "/coco").c_str(), 1);
    setenv("CONVEYOR_VIDEO_DATA", (d + "/videos").c_str(), 1);
    setenv("CONVEYOR_PLUGIN_DIR", std::filesystem::absolute("tests/plugins").c_str(), 1);
    return d;
  }();
  return dir;
}

std::vector<ShippedPipeline> ShippedPipelines(int batch) {
  const std::string n = std::to_string(batch) + " samples of ";
  return {
      {"pipelines/detection_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 300, 300) CHW", "encoded: float32 " + n + "(190, 4)",
        "encoded_labels: int32 " + n + "(190,)"},
       true},
      {"pipelines/external_source.yaml",
       {"--feed", "frames=200-480x200-640x3"},
       {"images_out: float16 " + n + "(3, 224, 224) CHW"},
       false},
      {"pipelines/image_classification_eval.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: int32 " + n + "(1,)"},
       true},
      {"pipelines/image_classification_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: int32 " + n + "(1,)"},
       true},
      {"pipelines/numpy_features.yaml", {}, {"features: float32 " + n + "(3, 16)"}, false},
      {"pipelines/plugin_example.yaml", {}, {"percent: float32 " + n + "(3, 16)"}, false},
      {"pipelines/random_augment.yaml", {}, {"quantized: int32 " + n + "(4, 4)", "flips: int32 " + n + "()"}, false},
      {"pipelines/recipe_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: int32 " + n + "(1,)"},
       true},
      {"pipelines/segmentation_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 256, 256) CHW", "masks: int32 " + n + "(256, 256, 1) HWC"},
       true},
      {"pipelines/tfrecord_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: int64 " + n + "(1,)"},
       true},
      {"pipelines/video_train.yaml",
       {},
       {"clips_out: float16 " + n + "(16, 3, 112, 112) FCHW", "labels: int32 " + n + "(1,)"},
       false},
      {"pipelines/webdataset_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: uint8 " + n + "(1,)"},
       true},
  };
}

std::vector<std::string> PipelineFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator("pipelines")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::pair<long, long> CapturesAndReplays(const std::string& summary) {
  const size_t at = summary.find("CUDA graphs");
  long captures = -1, replays = -1;
  if (at == std::string::npos ||
      std::sscanf(summary.c_str() + at, "CUDA graphs %ld captures, %ld replays", &captures, &replays) != 2) {
    return {-1, -1};
  }
  return {captures, replays};
}

std::vector<ZeroRegion> ZeroRegions(const std::string& npy_file) {
  const std::string bytes = ReadText(npy_file);
  const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), npy_file);
  if (h.dtype != DType::kFloat16 || h.shape.ndim() != 4 ||
      static_cast<int64_t>(bytes.size()) < h.data_offset + h.data_bytes()) {
    throw std::runtime_error(npy_file + ": expected a float16 NCHW array, got " + std::string(DTypeName(h.dtype)) +
                             " " + h.shape.ToString());
  }
  const int64_t n = h.shape[0], c = h.shape[1], height = h.shape[2], width = h.shape[3];
  std::vector<ZeroRegion> out;
  for (int64_t s = 0; s < n; ++s) {
    int64_t zeros = 0, y0 = LLONG_MAX, y1 = -1, x0 = LLONG_MAX, x1 = -1;
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        bool zero = true;
        for (int64_t ch = 0; ch < c && zero; ++ch) {
          uint16_t v;
          std::memcpy(&v, bytes.data() + h.data_offset + 2 * (((s * c + ch) * height + y) * width + x), 2);
          zero = HalfBitsToFloat(v) == 0.f;
        }
        if (!zero) continue;
        ++zeros;
        y0 = std::min(y0, y), y1 = std::max(y1, y), x0 = std::min(x0, x), x1 = std::max(x1, x);
      }
    }
    const int64_t box = zeros == 0 ? 0 : (y1 - y0 + 1) * (x1 - x0 + 1);
    out.push_back({static_cast<double>(zeros) / static_cast<double>(height * width), box == zeros});
  }
  return out;
}

}  // namespace conveyor::cli_test
