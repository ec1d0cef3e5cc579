// conveyor_pipeline_checkpoint / conveyor_pipeline_resume_from: the size query, the copy, a
// too-small buffer, NULLs, a resumed pipeline that continues where the first stopped (its later
// checkpoints equal the uninterrupted run's), and a refusal naming what differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/capi/conveyor.h"
#include "tests/distributed/checkpoint_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

// Owners: a failing ASSERT leaks nothing; `o = {}` releases at once.
template <typename T, void (*kFree)(T)>
struct Owner {
  T h = nullptr;
  Owner() = default;
  Owner(Owner&& other) noexcept : h(std::exchange(other.h, nullptr)) {}
  Owner& operator=(Owner&& other) noexcept {
    std::swap(h, other.h);
    return *this;
  }
  ~Owner() { kFree(h); }
};
using PipelineHandle = Owner<conveyor_pipeline_t, conveyor_pipeline_destroy>;
using OutputsHandle = Owner<conveyor_outputs_t, conveyor_outputs_release>;

PipelineHandle Create(const std::string& yaml) {
  PipelineHandle p;
  EXPECT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &p.h), CONVEYOR_OK) << conveyor_last_error();
  return p;
}

void Advance(PipelineHandle& p, int n) {
  for (int i = 0; i < n; ++i) {
    OutputsHandle o;
    ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
    o = {};
    ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
  }
}

std::string CheckpointOf(PipelineHandle& p) {
  size_t size = 0;
  EXPECT_EQ(conveyor_pipeline_checkpoint(p.h, nullptr, 0, &size), CONVEYOR_OK) << conveyor_last_error();
  std::string text(size + 1, 'x');
  EXPECT_EQ(conveyor_pipeline_checkpoint(p.h, text.data(), text.size(), &size), CONVEYOR_OK);
  EXPECT_EQ(text[size], '\0') << "NUL-terminated when there is room";
  text.resize(size);
  return text;
}

TEST(CheckpointCApi, CheckpointAndResume) {
  TrainOptions o;
  o.root = MakeJpegTree(2, 6);
  o.shards = 2;
  o.shard = 0;
  const std::string yaml = TrainYaml(o);
  PipelineHandle first = Create(yaml);
  size_t size = 0;
  EXPECT_EQ(conveyor_pipeline_checkpoint(first.h, nullptr, 0, &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_pipeline_checkpoint: pipeline \"train\": Checkpoint() before Build()"));
  ASSERT_EQ(conveyor_pipeline_build(first.h), CONVEYOR_OK) << conveyor_last_error();
  Advance(first, 3);
  const std::string at3 = CheckpointOf(first);
  EXPECT_THAT(at3, HasSubstr("conveyor-checkpoint 1\niteration 3\n"));
  char small[8];
  EXPECT_EQ(conveyor_pipeline_checkpoint(first.h, small, sizeof small, &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("buffer of 8 bytes, the checkpoint needs " + std::to_string(at3.size())));
  EXPECT_EQ(conveyor_pipeline_checkpoint(first.h, nullptr, 0, nullptr), CONVEYOR_ERROR_INVALID_ARGUMENT);
  Advance(first, 4);
  const std::string at7 = CheckpointOf(first);

  PipelineHandle resumed = Create(yaml);
  ASSERT_EQ(conveyor_pipeline_resume_from(resumed.h, at3.data(), at3.size()), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_build(resumed.h), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(CheckpointOf(resumed), at3);
  Advance(resumed, 4);
  EXPECT_EQ(CheckpointOf(resumed), at7);
  EXPECT_EQ(conveyor_pipeline_resume_from(resumed.h, at3.data(), at3.size()), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("ResumeFrom() after Build()"));

  o.seed = 99;
  PipelineHandle other = Create(TrainYaml(o));
  ASSERT_EQ(conveyor_pipeline_resume_from(other.h, at3.data(), at3.size()), CONVEYOR_OK);
  EXPECT_EQ(conveyor_pipeline_build(other.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("the checkpoint is of another pipeline: seed 7 in the checkpoint, 99 here"));
  EXPECT_EQ(conveyor_pipeline_resume_from(other.h, "garbage", 7), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_pipeline_resume_from: checkpoint line 1: expected "
                                               "\"conveyor-checkpoint VERSION\""));
  EXPECT_EQ(conveyor_pipeline_resume_from(other.h, nullptr, 0), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(conveyor_pipeline_resume_from(nullptr, "x", 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_pipeline_resume_from: pipeline: expected a non-NULL pointer"));
}

}  // namespace
}  // namespace conveyor::testing
