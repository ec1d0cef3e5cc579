// DecoderTimesBetween (`conveyor bench`'s decoder figures): per-call times and the engines / CUDA
// backend mix between two readings of the process's decoder counters, on fresh random readings;
// the expectations are computed here from the counters' meanings.
#include "cli/decoder_times.h"

#include <gtest/gtest.h>

#include <random>

namespace conveyor::cli {
namespace {

ops::GpuDecoderCounters Random(std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> n(0, 100000);
  std::uniform_real_distribution<double> s(0.0, 100.0);
  ops::GpuDecoderCounters c;
  c.images_hardware = n(rng), c.images_cuda = n(rng), c.images_cpu = n(rng);
  c.hw_batches = n(rng), c.calls = n(rng), c.slot_pending_calls = n(rng);
  c.hw_host_seconds = s(rng), c.hw_gpu_seconds = s(rng), c.cuda_seconds = s(rng);
  c.classify_seconds = s(rng), c.phase_b_seconds = s(rng), c.phase_c_seconds = s(rng);
  c.slot_wait_seconds = s(rng), c.call_seconds = s(rng);
  c.cuda_host_seconds = s(rng), c.cuda_pinned_wait_seconds = s(rng), c.cuda_issue_seconds = s(rng);
  c.images_engines_other = n(rng), c.fallbacks = n(rng), c.cpu_seconds = s(rng);
  c.hw_rate = s(rng) * 1000, c.cuda_rate = s(rng) * 1000;
  return c;
}

TEST(DecoderTimesTest, PerCallTimesAndTheMixOverTheSpan) {
  std::mt19937_64 rng(std::random_device{}());
  for (int round = 0; round < 20; ++round) {
    const ops::GpuDecoderCounters a = Random(rng);
    ops::GpuDecoderCounters b = a;
    const int64_t calls = 1 + static_cast<int64_t>(rng() % 500), batches = 1 + static_cast<int64_t>(rng() % 500);
    const int64_t hw = static_cast<int64_t>(rng() % 100000), cuda = static_cast<int64_t>(rng() % 100000);
    const int64_t cpu = static_cast<int64_t>(rng() % 1000), pending = static_cast<int64_t>(rng() % (calls + 1));
    std::uniform_real_distribution<double> s(0.001, 10.0);
    const double host = s(rng), gpu = s(rng), cuda_s = s(rng), classify = s(rng), phase_b = s(rng),
                 phase_c = s(rng), wait = s(rng), call = s(rng);
    b.calls += calls, b.hw_batches += batches, b.slot_pending_calls += pending;
    b.images_hardware += hw, b.images_cuda += cuda, b.images_cpu += cpu;
    b.hw_host_seconds += host, b.hw_gpu_seconds += gpu, b.cuda_seconds += cuda_s;
    const double w_host = s(rng), w_wait = s(rng), w_issue = s(rng);
    b.cuda_host_seconds += w_host, b.cuda_pinned_wait_seconds += w_wait, b.cuda_issue_seconds += w_issue;
    const int64_t other = static_cast<int64_t>(rng() % 5000), refused = static_cast<int64_t>(rng() % 500);
    const double cpu_s = s(rng);
    b.images_engines_other += other, b.fallbacks += refused, b.cpu_seconds += cpu_s;
    b.classify_seconds += classify, b.phase_b_seconds += phase_b, b.phase_c_seconds += phase_c;
    b.slot_wait_seconds += wait, b.call_seconds += call;
    b.hw_rate = s(rng) * 1000, b.cuda_rate = s(rng) * 1000;
    b.hw_engines = 1 + static_cast<int>(rng() % 16), b.hw_cores_per_engine = 1 + static_cast<int>(rng() % 8);
    b.hw_parts = 1 + static_cast<int>(rng() % 4), b.hw_parts_chosen = 1 + static_cast<int>(rng() % 4);

    const DecoderTimes t = DecoderTimesBetween(a, b);
    const double n = static_cast<double>(calls), nb = static_cast<double>(batches);
    EXPECT_DOUBLE_EQ(t.calls, n);
    EXPECT_NEAR(t.classify, 1e3 * classify / n, 1e-9 * (1 + t.classify));
    EXPECT_NEAR(t.b, 1e3 * phase_b / n, 1e-9 * (1 + t.b));
    EXPECT_NEAR(t.c, 1e3 * phase_c / n, 1e-9 * (1 + t.c));
    EXPECT_NEAR(t.wait, 1e3 * wait / n, 1e-9 * (1 + t.wait));
    EXPECT_NEAR(t.call, 1e3 * call / n, 1e-9 * (1 + t.call));
    EXPECT_NEAR(t.pending, static_cast<double>(pending) / n, 1e-12);
    EXPECT_NEAR(t.engines_images, static_cast<double>(hw) / n, 1e-9);
    EXPECT_NEAR(t.cuda_images, static_cast<double>(cuda) / n, 1e-9);
    EXPECT_NEAR(t.cpu_images, static_cast<double>(cpu) / n, 1e-9);
    const double share = hw + cuda > 0 ? static_cast<double>(hw) / static_cast<double>(hw + cuda) : 0.0;
    EXPECT_NEAR(t.engines_share, share, 1e-12);
    // The engines' times are per batch whose GPU time was read, not per call.
    EXPECT_NEAR(t.engines_host, 1e3 * host / nb, 1e-9 * (1 + t.engines_host));
    EXPECT_NEAR(t.engines_gpu, 1e3 * gpu / nb, 1e-9 * (1 + t.engines_gpu));
    EXPECT_NEAR(t.cuda, 1e3 * cuda_s / n, 1e-9 * (1 + t.cuda));
    EXPECT_NEAR(t.cuda_host, 1e3 * w_host / n, 1e-9 * (1 + t.cuda_host));
    EXPECT_NEAR(t.cuda_pinned_wait, 1e3 * w_wait / n, 1e-9 * (1 + t.cuda_pinned_wait));
    EXPECT_NEAR(t.engines_other_images, static_cast<double>(other) / n, 1e-9);
    EXPECT_NEAR(t.fallbacks, static_cast<double>(refused) / n, 1e-9);
    EXPECT_NEAR(t.cpu_decode, 1e3 * cpu_s / n, 1e-9 * (1 + t.cpu_decode));
    EXPECT_NEAR(t.cuda_issue, 1e3 * w_issue / n, 1e-9 * (1 + t.cuda_issue));
    EXPECT_DOUBLE_EQ(t.engines_rate, b.hw_rate);  // the balancer's rates at the span's end
    EXPECT_DOUBLE_EQ(t.cuda_rate, b.cuda_rate);
    EXPECT_EQ(t.engines, b.hw_engines);  // what nvJPEG reported of the engines
    EXPECT_EQ(t.cores_per_engine, b.hw_cores_per_engine);
    EXPECT_EQ(t.handles, b.hw_parts);  // handles made, and the tuner's choice at the span's end
    EXPECT_EQ(t.handles_chosen, b.hw_parts_chosen);
  }
}

TEST(DecoderTimesTest, NoCallsInTheSpanGivesNothing) {
  std::mt19937_64 rng(std::random_device{}());
  const ops::GpuDecoderCounters a = Random(rng);
  ops::GpuDecoderCounters b = a;
  b.images_hardware += 7;  // counters that moved without a call: not a span to report
  b.hw_rate += 1;
  const DecoderTimes t = DecoderTimesBetween(a, b);
  EXPECT_EQ(t.calls, 0);
  EXPECT_EQ(t.engines_images, 0);
  EXPECT_EQ(t.engines_rate, 0);
}

TEST(DecoderTimesTest, NoEnginesBatchLeavesTheirTimesAtZero) {
  std::mt19937_64 rng(std::random_device{}());
  const ops::GpuDecoderCounters a = Random(rng);
  ops::GpuDecoderCounters b = a;
  b.calls += 4;
  b.images_cuda += 1024;
  b.cuda_seconds += 0.04;
  const DecoderTimes t = DecoderTimesBetween(a, b);
  EXPECT_EQ(t.engines_host, 0);
  EXPECT_EQ(t.engines_gpu, 0);
  EXPECT_EQ(t.engines_share, 0);
  EXPECT_NEAR(t.cuda_images, 256, 1e-9);
  EXPECT_NEAR(t.cuda, 10, 1e-9);
}

}  // namespace
}  // namespace conveyor::cli
