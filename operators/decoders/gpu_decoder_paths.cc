// GpuDecoder's two nvJPEG paths: one image through the CUDA backend's decoupled API on a worker,
// one batch of images on the hardware JPEG engines, and the engines' times read back.
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "operators/decoders/gpu_decoder_impl.h"

namespace conveyor::ops {

ThreadUsage ThreadUsage::Now() {
  ThreadUsage u;
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) u.cpu_ns = ts.tv_sec * int64_t{1000000000} + ts.tv_nsec;
  rusage r{};
  if (getrusage(RUSAGE_THREAD, &r) == 0) {
    u.voluntary = r.ru_nvcsw;
    u.involuntary = r.ru_nivcsw;
  }
  return u;
}

// One image through the decoupled API: host phase on this thread, device phases on the worker's
// stream (which already waits for ws.stream(), where the outputs were allocated).
void GpuDecoder::Impl::DecodeCuda(Worker& w, const GpuDecodeSample& s, const std::string& where,
                                  CudaPhaseTimes& times, CudaImageTrace* trace) {
  const NvjpegApi& a = api();
  const int kind = s.height * s.width > options.hybrid_huffman_threshold ? 1 : 0;
  HybridLane& lane = w.lanes[kind];
  auto since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };
  const ThreadAllocTally allocs_before = trace != nullptr ? ThisThreadAllocTally() : ThreadAllocTally{};
  const auto t0 = Clock::now();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamParse(handle, s.data, s.size, 0, 0, w.jpeg_stream), where);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(w.params, FormatOf(options.color)), where);
  if (IsWhole(s)) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(w.params, 0, 0, -1, -1), where);
  } else {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(w.params, static_cast<int>(s.roi.x), static_cast<int>(s.roi.y),
                                                     static_cast<int>(s.roi.w), static_cast<int>(s.roi.h)),
                          where);
  }
  // The pinned buffer we are about to refill may still feed the transfer of an earlier image.
  const int b = lane.next;
  lane.next = (lane.next + 1) % static_cast<int>(lane.pinned.size());
  const auto t1 = Clock::now();
  lane.pinned_done[b].Synchronize();
  times.pinned_wait_ns += since(t1);
  const auto t2 = Clock::now();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegStateAttachPinnedBuffer(lane.state, lane.pinned[b]), where);
  ThreadUsage usage_before;
  Clock::time_point attached;
  if (trace != nullptr) {
    trace->lane_busy = lane.device_done.Query() ? 0 : 1;
    trace->cpu_start = sched_getcpu();
    attached = Clock::now();
    usage_before = ThreadUsage::Now();
  }
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegHost(handle, decoders[kind], lane.state, w.params, w.jpeg_stream), where);
  if (trace != nullptr) {
    const ThreadUsage usage = ThreadUsage::Now();
    trace->cpu_end = sched_getcpu();
    trace->attach_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(attached - t2).count();
    trace->host_cpu_ns = usage.cpu_ns - usage_before.cpu_ns;
    trace->voluntary = usage.voluntary - usage_before.voluntary;
    trace->involuntary = usage.involuntary - usage_before.involuntary;
  }
  const auto t3 = Clock::now();
  times.host_ns += std::chrono::duration_cast<std::chrono::nanoseconds>((t1 - t0) + (t3 - t2)).count();
  CONVEYOR_NVJPEG_CHECK(
      a.nvjpegDecodeJpegTransferToDevice(handle, decoders[kind], lane.state, w.jpeg_stream, w.stream.get()), where);
  lane.pinned_done[b].Record(w.stream.view());
  nvjpegImage_t img = ImageOf(s, DecodeChannels(options.color));
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegDevice(handle, decoders[kind], lane.state, &img, w.stream.get()), where);
  if (trace != nullptr) lane.device_done.Record(w.stream.view());
  times.issue_ns += since(t3);
  if (trace != nullptr) {
    const ThreadAllocTally allocs = ThisThreadAllocTally();
    trace->kind = kind;
    trace->parse_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    trace->wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
    trace->host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t3 - t2).count();
    trace->issue_ns = since(t3);
    trace->alloc_calls = allocs.device_calls + allocs.pinned_calls - allocs_before.device_calls -
                         allocs_before.pinned_calls;
    trace->alloc_ns = allocs.device_ns + allocs.pinned_ns - allocs_before.device_ns - allocs_before.pinned_ns;
  }
}

void GpuDecoder::Impl::DecodeHardware(SlotState& slot, int p, int begin, int end,
                                      const std::vector<GpuDecodeSample>& samples, StreamView stream,
                                      const std::string& where) {
  const NvjpegApi& a = api();
  HwPart& part = slot.hw[static_cast<size_t>(p)];
  part.preallocated = false;
  part.ready_wait_s = 0;
  const int n = end - begin;
  part.data.resize(n);
  part.lengths.resize(n);
  part.images_out.resize(n);
  part.params.resize(n);
  bool any_roi = false;
  int max_h = 0, max_w = 0, max_bytes_x2 = 0;
  for (int k = 0; k < n; ++k) {
    const GpuDecodeSample& s = samples[hw_list[begin + k]];
    part.data[k] = s.data;
    part.lengths[k] = s.size;
    part.images_out[k] = ImageOf(s, DecodeChannels(options.color));
    part.params[k] = slot.hw_params[static_cast<size_t>(p)][static_cast<size_t>(hw_list[begin + k])];
    any_roi |= !IsWhole(s);
    max_h = std::max(max_h, static_cast<int>(s.height));
    max_w = std::max(max_w, static_cast<int>(s.width));
    max_bytes_x2 = std::max(max_bytes_x2, s.chroma_bytes_x2 > 0 ? s.chroma_bytes_x2 : 6);
  }
  const std::string what = where + ": engines" + (hw_parts > 1 ? " part " + std::to_string(p) : std::string()) + ", " +
                           std::to_string(n) + " images";
  if (a.nvjpegDecodeBatchedPreAllocate != nullptr && !part.prealloc_failed &&
      (n > part.prealloc_n || max_h > part.prealloc_h || max_w > part.prealloc_w ||
       max_bytes_x2 > part.prealloc_bytes_x2)) {
    // Grow with headroom so the balance moving by a few images does not reallocate again; chroma
    // planes for the widest subsampling seen (4:2:0 photos need half of 4:4:4's).
    part.prealloc_n = std::max(part.prealloc_n, (n * 5 / 4 + 7) / 8 * 8);
    part.prealloc_h = std::max(part.prealloc_h, (max_h + 63) / 64 * 64);
    part.prealloc_w = std::max(part.prealloc_w, (max_w + 63) / 64 * 64);
    part.prealloc_bytes_x2 = std::max(part.prealloc_bytes_x2, max_bytes_x2);
    part.preallocated = true;
    const nvjpegStatus_t st =
        a.nvjpegDecodeBatchedPreAllocate(HwHandle(p), part.state, part.prealloc_n, part.prealloc_w, part.prealloc_h,
                                         CssForBytes(part.prealloc_bytes_x2), FormatOf(options.color));
    if (st != NVJPEG_STATUS_SUCCESS) {
      // Preallocation only saves reallocations: decode without it (slower when batches grow),
      // and say so once.
      part.prealloc_failed = true;
      std::cerr << "conveyor: " << what << ": nvjpegDecodeBatchedPreAllocate failed (" << StatusName(st)
                << "); the engines' buffers grow on demand\n";
    }
  }
  // The engines are not trusted to wait for work enqueued on `stream` before this call (what last
  // wrote or read the outputs' memory: a previous kernel, an allocation's reuse, a fill): the host
  // waits for it first (recorded at the call's start, so phase A ran meanwhile). Under the H100's
  // sanitizer sweep (2026-11-25), with the GPU loaded by other processes, engine-decoded images
  // came back as the test's 0xA5 fill enqueued before the call; CUDA-backend images never did
  // (their streams wait for an event). gpu_decoder_gpu_test's EnginesWaitForEarlierWorkOnTheStream
  // makes that deterministic with a spin kernel.
  const auto w0 = Clock::now();
  if (engines_wait) slot.ready.Synchronize();
  if (p > 0) CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), slot.ready.get(), 0));
  const auto t0 = Clock::now();
  part.ready_wait_s = std::chrono::duration<double>(t0 - w0).count();
  part.start.Record(stream);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedInitialize(HwHandle(p), part.state, n, 1, FormatOf(options.color)), what);
  if (any_roi) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedEx(HwHandle(p), part.state, part.data.data(), part.lengths.data(),
                                                  part.images_out.data(), part.params.data(), stream.get()),
                          what);
  } else {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatched(HwHandle(p), part.state, part.data.data(), part.lengths.data(),
                                                part.images_out.data(), stream.get()),
                          what);
  }
  part.end.Record(stream);
  part.host_s = std::chrono::duration<double>(Clock::now() - t0).count();
  part.end_pending_at_return = !part.end.Query();
  part.images = n;
  part.pending = true;
}

// The engines' time of a slot's previous batch (added to this call's counters), read at the slot's next use (its events have
// completed by then: Decode waits for slot.done first), never waited for. The sub-batches run side
// by side: the engines' rate is their images over the longest one.
void GpuDecoder::Impl::ReadEngineTimes(SlotState& slot, GpuDecoderCounters& call) {
  double longest = 0;
  int64_t images = 0;
  for (HwPart& part : slot.hw) {
    if (!part.pending || !part.end.Query()) continue;
    const double gpu_s = cuda::Event::ElapsedMs(part.start, part.end) / 1e3;
    longest = std::max({longest, gpu_s, part.host_s});
    images += part.images;
    part.pending = false;
    ++call.hw_batches;
    call.hw_host_seconds += part.host_s;
    call.hw_gpu_seconds += gpu_s;
  }
  if (longest > 0 && images > 0) {
    const double r = static_cast<double>(images) / longest;
    hw_rate = hw_rate == 0 ? r : (1 - kEma) * hw_rate + kEma * r;
  }
}

}  // namespace conveyor::ops
