// conveyor_pipeline_skipped: the files a decoder with on_error: skip dropped, through the C API,
// on a CPU pipeline over real JPEGs with a truncated one among them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/capi/conveyor.h"
#include "tests/capi/capi_handles.h"
#include "tools/testimages/test_images.h"

namespace conveyor::capi::testing {
namespace {

using ::testing::HasSubstr;

TEST(CApiSkipped, ListsTheFilesADecoderSkipped) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string root = std::string(dir != nullptr ? dir : "/tmp") + "/capi_skipped";
  std::filesystem::create_directories(root + "/cls");
  for (int i = 0; i < 6; ++i) {
    std::vector<uint8_t> jpeg = testimages::EncodeJpeg(testimages::MakePhotoLike(24 + i, 32, 3, 40 + i),
                                                       testimages::Subsampling::k420, 90, false);
    if (i == 2) jpeg = testimages::Truncate(jpeg, 0.5);
    testimages::WriteFile(root + "/cls/" + std::to_string(i) + ".jpg", jpeg);
  }
  const std::string yaml =
      "pipeline: {name: skipped, batch_size: 5, device: cpu, num_threads: 2, prefetch_depth: 1}\nops:\n"
      "  - {op: readers.file, name: reader, args: {file_root: \"" + root + "\"}, outputs: [jpegs, labels]}\n"
      "  - {op: decoders.image, name: decode, inputs: [jpegs], args: {on_error: skip}, outputs: [images]}\n"
      "outputs: [images, labels]\n";
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &p.h), CONVEYOR_OK) << conveyor_last_error();
  size_t size = 0;
  int64_t count = -1;
  EXPECT_EQ(conveyor_pipeline_skipped(p.h, &count, nullptr, 0, &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  {
    OutputsHandle out;  // the first batch read: 5 good files, the truncated one skipped
    ASSERT_EQ(conveyor_pipeline_outputs(p.h, &out.h), CONVEYOR_OK) << conveyor_last_error();
  }
  ASSERT_EQ(conveyor_pipeline_skipped(p.h, &count, nullptr, 0, &size), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(count, 1);
  std::string text(size + 1, '\0');
  ASSERT_EQ(conveyor_pipeline_skipped(p.h, nullptr, text.data(), text.size(), &size), CONVEYOR_OK);
  text.resize(size);
  ASSERT_FALSE(text.empty());
  EXPECT_THAT(text, ::testing::StartsWith("reader\t" + root + "/cls/2.jpg\t1\ttruncated JPEG data: the file ends after "));
  EXPECT_EQ(text.back(), '\n');
  char small[4];
  EXPECT_EQ(conveyor_pipeline_skipped(p.h, nullptr, small, sizeof(small), &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("buffer of 4 bytes, the list needs "));
  EXPECT_EQ(conveyor_pipeline_skipped(p.h, &count, nullptr, 0, nullptr), CONVEYOR_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace conveyor::capi::testing
