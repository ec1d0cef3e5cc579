// Re-filled iterations with one stage thread and with the CPU stage on its own thread
// (cpu_stage_thread; docs/executor.md): a run of a skip pipeline, recorded so that two runs — one
// per mode — can be compared batch by batch, with a checkpoint taken on the way and resumed.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/pipeline/pipeline.h"

namespace conveyor::testing {

struct SkipRun {
  std::vector<std::vector<SampleSource>> batches;  // output `labels`' sources, per iteration
  std::map<std::string, int64_t> times;           // the counters' skipped files: how often each
  int64_t refilled = 0;
  bool cpu_stage_thread = false;
  std::string checkpoint;  // taken before iteration `checkpoint_at`
};

// `yaml` with `, seed: N}` in its pipeline section, given cpu_stage_thread: `mode`.
inline std::string WithStageThread(std::string yaml, bool mode) {
  const size_t at = yaml.find("}\nops:");
  EXPECT_NE(at, std::string::npos) << yaml;
  return yaml.insert(at, std::string(", cpu_stage_thread: ") + (mode ? "true" : "false"));
}

// Takes `iterations` batches (Run after each), then the ones already scheduled, so that every run
// has run the same iterations when its counters are read. `resume`: a checkpoint to start from.
inline SkipRun RunSkip(const std::string& yaml, int iterations, int checkpoint_at = -1,
                       const std::string& resume = "") {
  SkipRun run;
  Pipeline p = Pipeline::FromYaml(yaml);
  if (!resume.empty()) p.ResumeFrom(resume);
  p.Build();
  auto take = [&] {
    PipelineOutputs out = p.Outputs();
    run.batches.push_back(out.Cpu(out.Index("labels")).sources());
  };
  for (int k = 0; k < iterations; ++k) {
    if (k == checkpoint_at) run.checkpoint = p.Checkpoint();
    take();
    p.Run();
  }
  for (int k = 0; k < p.spec().prefetch_depth; ++k) take();
  const ExecutorCounters c = p.counters();
  for (const ExecutorCounters::SkippedFile& f : c.skipped_files) run.times[f.file] = f.times;
  run.refilled = c.refilled_iterations;
  run.cpu_stage_thread = c.cpu_stage_thread;
  return run;
}

// The same pipeline in both modes: the same batches, skips and re-fills; a checkpoint taken with the
// CPU stage ahead resumes to the same batches, in either mode. Returns the re-fills.
inline int64_t ExpectStageThreadsAgree(const std::string& yaml, int iterations, int checkpoint_at) {
  const SkipRun one = RunSkip(WithStageThread(yaml, false), iterations);
  const SkipRun two = RunSkip(WithStageThread(yaml, true), iterations, checkpoint_at);
  EXPECT_FALSE(one.cpu_stage_thread);
  EXPECT_TRUE(two.cpu_stage_thread);
  EXPECT_EQ(two.batches, one.batches);
  EXPECT_EQ(two.times, one.times);
  EXPECT_EQ(two.refilled, one.refilled);
  // Resumed in either mode (cpu_stage_thread does not decide the batches: the checkpoint's
  // fingerprint leaves it out).
  for (const bool mode : {true, false}) {
    const SkipRun resumed = RunSkip(WithStageThread(yaml, mode), iterations - checkpoint_at, -1, two.checkpoint);
    for (size_t k = 0; k < resumed.batches.size(); ++k) {
      EXPECT_EQ(resumed.batches[k], one.batches.at(k + static_cast<size_t>(checkpoint_at)))
          << "resumed " << (mode ? "with" : "without") << " the CPU stage thread, iteration " << k;
    }
  }
  return one.refilled;
}

}  // namespace conveyor::testing
