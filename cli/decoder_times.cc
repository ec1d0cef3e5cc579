#include "cli/decoder_times.h"

#include <cstdint>

namespace conveyor::cli {

DecoderTimes DecoderTimesBetween(const ops::GpuDecoderCounters& a, const ops::GpuDecoderCounters& b) {
  DecoderTimes t;
  t.calls = static_cast<double>(b.calls - a.calls);
  if (t.calls <= 0) return DecoderTimes{};
  auto per_call = [&](double x, double y) { return (y - x) / t.calls; };
  auto ms = [&](double x, double y) { return 1e3 * per_call(x, y); };
  auto count = [&](int64_t x, int64_t y) { return per_call(static_cast<double>(x), static_cast<double>(y)); };
  t.wait = ms(a.slot_wait_seconds, b.slot_wait_seconds);
  t.classify = ms(a.classify_seconds, b.classify_seconds);
  t.b = ms(a.phase_b_seconds, b.phase_b_seconds);
  t.c = ms(a.phase_c_seconds, b.phase_c_seconds);
  t.call = ms(a.call_seconds, b.call_seconds);
  t.pending = count(a.slot_pending_calls, b.slot_pending_calls);
  t.engines_images = count(a.images_hardware, b.images_hardware);
  t.cuda_images = count(a.images_cuda, b.images_cuda);
  t.cuda_shared_images = count(a.images_cuda_shared, b.images_cuda_shared);
  t.cpu_images = count(a.images_cpu, b.images_cpu);
  t.ahead_images = count(a.images_ahead, b.images_ahead);
  t.ahead_taken_back = count(a.ahead_taken_back, b.ahead_taken_back);
  t.ahead_wait = ms(a.ahead_wait_seconds, b.ahead_wait_seconds);
  const double gpu_paths = t.engines_images + t.cuda_images;
  t.engines_share = gpu_paths > 0 ? t.engines_images / gpu_paths : 0;
  const double batches = static_cast<double>(b.hw_batches - a.hw_batches);
  if (batches > 0) {
    t.engines_host = 1e3 * (b.hw_host_seconds - a.hw_host_seconds) / batches;
    t.engines_gpu = 1e3 * (b.hw_gpu_seconds - a.hw_gpu_seconds) / batches;
  }
  t.cuda = ms(a.cuda_seconds, b.cuda_seconds);
  t.cuda_host = ms(a.cuda_host_seconds, b.cuda_host_seconds);
  t.cuda_pinned_wait = ms(a.cuda_pinned_wait_seconds, b.cuda_pinned_wait_seconds);
  t.cuda_issue = ms(a.cuda_issue_seconds, b.cuda_issue_seconds);
  t.engines_other_images = count(a.images_engines_other, b.images_engines_other);
  t.fallbacks = count(a.fallbacks, b.fallbacks);
  t.cpu_decode = ms(a.cpu_seconds, b.cpu_seconds);
  t.engines_rate = b.hw_rate;
  t.cuda_rate = b.cuda_rate;
  t.engines = b.hw_engines;
  t.cores_per_engine = b.hw_cores_per_engine;
  t.handles = b.hw_parts;
  t.handles_chosen = b.hw_parts_chosen;
  t.engines_only_chosen = b.hw_engines_only_chosen ? 1 : 0;
  return t;
}

}  // namespace conveyor::cli
