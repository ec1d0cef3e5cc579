// Test-only operators for the executor tests and benchmark (registered by linking :test_ops).
//
// | op                  | device | capturable | what it does                                        |
// |---------------------|--------|------------|-----------------------------------------------------|
// | testing.pattern     | cpu    | -          | float32 1-D samples of PatternValue(iter, sample, i);|
// |                     |        |            | sizes vary per (iteration, sample), sleeps, fails   |
// | testing.gpu_spin    | gpu    | no         | spins on the GPU, then out = in + add; host         |
// |                     |        |            | timestamps around the GPU work (cudaLaunchHostFunc)  |
// | testing.augment     | gpu    | yes        | out = fmaf(in, scale_s, bias_s) with per-sample      |
// |                     |        |            | Philox draws read from a per-slot descriptor buffer  |
// | testing.host_phase  | gpu    | no         | a GPU op with a host phase (operator.h): host-placed |
// |                     |        |            | uint8 in; 255 - in on the pool into per-slot pinned  |
// |                     |        |            | staging, async copy + kernel: out = that + add       |
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/memory/memory_kind.h"
#include "core/op/philox.h"

namespace conveyor::testing {

// The value testing.pattern writes: exact in float32, different for every iteration and sample.
inline float PatternValue(int64_t iteration, int sample, int64_t i) {
  return static_cast<float>((iteration * 7919 + sample * 131 + i) % 1000003);
}

// The number of elements of `sample` in `iteration` for testing.pattern's arguments: the first
// kPatternWarmup iterations take max_size (so every slot of a ring of up to that depth reaches its
// capacity), later ones a draw in [min, max]; from `grow_at` on (when >= 0) four times that.
inline constexpr int64_t kPatternWarmup = 4;
int64_t PatternSize(int64_t iteration, int sample, int64_t min_size, int64_t max_size, int64_t grow_at);

// The per-sample parameters testing.augment draws (same on host and device).
struct AugmentParams {
  float scale;
  float bias;
};
inline AugmentParams DrawAugment(uint64_t seed, uint32_t node, int64_t iteration, int sample) {
  Philox rng(seed, node, static_cast<uint64_t>(iteration), static_cast<uint32_t>(sample));
  AugmentParams p;
  p.scale = rng.NextUniform(0.5f, 2.0f);
  p.bias = rng.NextUniform(-8.0f, 8.0f);
  return p;
}

// Host timestamps recorded by ops with `record: true`.
struct TimelineEvent {
  std::string node;
  int64_t iteration;
  bool start;  // start or end of the node's work (host work for CPU nodes, GPU work for GPU nodes)
  std::chrono::steady_clock::time_point time;
};
void ClearTimeline();
std::vector<TimelineEvent> Timeline();
// Records a timeline event now (host) / when `stream` reaches this point (a host callback).
void Stamp(const std::string& node, int64_t iteration, bool start);
void StampOnStream(cuda::StreamView stream, const std::string& node, int64_t iteration, bool start);

// What testing.host_phase writes for input byte `in`: exact in float32.
inline float HostPhaseValue(uint8_t in, double add) {
  return static_cast<float>(255 - in) + static_cast<float>(add);
}
// The most distinct threads one host phase of testing.host_phase ran on (since the last reset).
int HostPhaseMaxThreads();
void ResetHostPhaseMaxThreads();
// The memory kinds of the host input testing.host_phase has read (since the last reset).
std::vector<MemoryKind> HostPhaseInputKinds();
void ResetHostPhaseInputKinds();
// What testing.host_phase saw: each LookAhead (ahead) and RunGpu call's iteration and a checksum of
// its input, in call order.
struct HostPhaseLook {
  int64_t iteration;
  uint64_t checksum;
  bool ahead;
  std::chrono::steady_clock::time_point time;
};
std::vector<HostPhaseLook> HostPhaseLooks();
void ClearHostPhaseLooks();

}  // namespace conveyor::testing
