#include "tests/cli/shipped_pipelines.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

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
      {"pipelines/segmentation_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 256, 256) CHW", "masks: int32 " + n + "(256, 256, 1) HWC"},
       true},
      {"pipelines/tfrecord_train.yaml",
       {},
       {"images_out: float16 " + n + "(3, 224, 224) CHW", "labels: int64 " + n + "(1,)"},
       true},
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

}  // namespace conveyor::cli_test
