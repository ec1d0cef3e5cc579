// What the tests of the shipped pipelines (pipelines/*.yaml) share: the sample dataset, generated
// once per test process by the real tool (tools/make_sample_data) into $TEST_TMPDIR, the variables
// that point the pipelines at it, and one case per pipeline file.
//
// | variable             | set to                               | read by                          |
// |----------------------|--------------------------------------|----------------------------------|
// | CONVEYOR_DATA        | <data>/samples (10 class folders)    | image_classification_{train,eval}, recipe_train |
// | CONVEYOR_NPY_DATA    | <data>/samples_npy (16 .npy files)   | numpy_features, plugin_example   |
// | CONVEYOR_TFRECORD_DATA | <data>/tfrecord (4 files + indexes) | tfrecord_train                   |
// | CONVEYOR_WEBDATASET_DATA | <data>/webdataset (4 tar shards + indexes) | webdataset_train       |
// | CONVEYOR_COCO_DATA   | <data>/coco (images/, annotations.json) | detection_train, segmentation_train |
// | CONVEYOR_VIDEO_DATA  | <data>/videos (3 class folders of clips) | video_train                    |
// | CONVEYOR_PLUGIN_DIR  | tests/plugins in the runfiles        | plugin_example                   |
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace conveyor::cli_test {

// The folder make_sample_data wrote (generated on the first call; the variables above set).
const std::string& SampleData();

struct ShippedPipeline {
  std::string file;                       // "pipelines/numpy_features.yaml"
  std::vector<std::string> args;          // extra arguments it needs (--feed for external sources)
  std::vector<std::string> outputs;       // "name: dtype N samples of (shape)" at the given batch
  bool decodes = false;                   // has a decoders.* node
};

// One per pipelines/*.yaml, with the outputs expected at batch size `batch`.
std::vector<ShippedPipeline> ShippedPipelines(int batch);

// The *.yaml files in pipelines/ (the runfiles copy), sorted.
std::vector<std::string> PipelineFiles();

// "CUDA graphs     N captures, M replays" → {N, M}; {-1, -1} when the line is missing.
std::pair<long, long> CapturesAndReplays(const std::string& summary);

// Per sample of a saved float16 NCHW batch (an .npy file written by --save-outputs): the pixels
// whose every channel is exactly 0 — what recipe_train's random erasing writes, and what its
// normalization of uint8 values never gives (the means are not integers).
struct ZeroRegion {
  double fraction = 0;     // of the sample's pixels
  bool rectangle = false;  // they are exactly the pixels of their bounding box (true when none)
  friend bool operator==(const ZeroRegion&, const ZeroRegion&) = default;
  friend std::ostream& operator<<(std::ostream& os, const ZeroRegion& z) {
    return os << "{" << z.fraction << (z.rectangle ? ", rectangle}" : ", not a rectangle}");
  }
};
std::vector<ZeroRegion> ZeroRegions(const std::string& npy_file);

}  // namespace conveyor::cli_test
