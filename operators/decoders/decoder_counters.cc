#include "operators/decoders/decoder_counters.h"

#include <array>

namespace conveyor::ops {
namespace {

using C = GpuDecoderCounters;
constexpr DecoderCounterField Count(const char* name, int64_t C::*m) { return {name, m, nullptr}; }
constexpr DecoderCounterField Seconds(const char* name, double C::*m) { return {name, nullptr, m}; }

constexpr std::array kFields = {
    Count("images_hardware", &C::images_hardware),
    Count("images_cuda", &C::images_cuda),
    Count("images_cuda_shared", &C::images_cuda_shared),
    Count("images_ahead", &C::images_ahead),
    Count("ahead_taken_back", &C::ahead_taken_back),
    Count("images_cpu", &C::images_cpu),
    Count("images_jpeg2000", &C::images_jpeg2000),
    Count("fallbacks", &C::fallbacks),
    Count("images_engines_other", &C::images_engines_other),
    Count("calls", &C::calls),
    Count("hw_batches", &C::hw_batches),
    Count("hw_preallocations", &C::hw_preallocations),
    Count("slot_pending_calls", &C::slot_pending_calls),
    Count("hw_end_pending", &C::hw_end_pending),
    Count("hw_unchecked", &C::hw_unchecked),
    Count("hw_failed_calls", &C::hw_failed_calls),
    Seconds("hw_host_seconds", &C::hw_host_seconds),
    Seconds("hw_gpu_seconds", &C::hw_gpu_seconds),
    Seconds("hw_ready_wait_seconds", &C::hw_ready_wait_seconds),
    Seconds("hw_start_seconds", &C::hw_start_seconds),
    Seconds("cuda_seconds", &C::cuda_seconds),
    Seconds("cuda_host_seconds", &C::cuda_host_seconds),
    Seconds("cuda_pinned_wait_seconds", &C::cuda_pinned_wait_seconds),
    Seconds("cuda_issue_seconds", &C::cuda_issue_seconds),
    Seconds("cpu_seconds", &C::cpu_seconds),
    Seconds("jpeg2000_seconds", &C::jpeg2000_seconds),
    Seconds("classify_seconds", &C::classify_seconds),
    Seconds("phase_b_seconds", &C::phase_b_seconds),
    Seconds("phase_c_seconds", &C::phase_c_seconds),
    Seconds("slot_wait_seconds", &C::slot_wait_seconds),
    Seconds("ahead_wait_seconds", &C::ahead_wait_seconds),
    Seconds("call_seconds", &C::call_seconds),
};

}  // namespace

std::span<const DecoderCounterField> DecoderCounterFields() { return kFields; }

void AddCounters(GpuDecoderCounters& to, const GpuDecoderCounters& call) {
  for (const DecoderCounterField& f : kFields) {
    if (f.count != nullptr) {
      to.*f.count += call.*f.count;
    } else {
      to.*f.seconds += call.*f.seconds;
    }
  }
}

void CopyLatest(GpuDecoderCounters& to, const GpuDecoderCounters& from) {
  to.nvjpeg_available = from.nvjpeg_available;
  to.hardware_available = from.hardware_available;
  to.nvjpeg2k_available = from.nvjpeg2k_available;
  to.nvjpeg2k_unavailable_reason = from.nvjpeg2k_unavailable_reason;
  to.hw_share = from.hw_share;
  to.hw_rate = from.hw_rate;
  to.cuda_rate = from.cuda_rate;
  to.hw_engines = from.hw_engines;
  to.hw_cores_per_engine = from.hw_cores_per_engine;
  to.hw_parts = from.hw_parts;
  to.hw_parts_chosen = from.hw_parts_chosen;
  to.hw_engines_only_chosen = from.hw_engines_only_chosen;
  to.hw_no_pipeline = from.hw_no_pipeline;
  to.unavailable_reason = from.unavailable_reason;
}

}  // namespace conveyor::ops
