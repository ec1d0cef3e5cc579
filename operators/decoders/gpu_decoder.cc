// GpuDecoder::Decode: route every image, run every path side by side, send refusals down their
// chains, join on ws.stream() (gpu_decoder.h has the phases and the contract).
#include "operators/decoders/gpu_decoder.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <iostream>
#include <mutex>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "operators/decoders/gpu_decoder_impl.h"

namespace conveyor::ops {
namespace {

// A path's worker (CudaPath's, Jpeg2000Path's) for one ParallelFor chunk, taken at its first image
// and given back when the chunk ends, also by exception. Not copyable: two chunks must never share
// a worker.
template <typename Path>
class WorkerLease {
 public:
  WorkerLease(Path& path, cudaEvent_t start) : path_(path), start_(start) {}
  ~WorkerLease() { Release(); }
  WorkerLease(const WorkerLease&) = delete;
  WorkerLease& operator=(const WorkerLease&) = delete;
  typename Path::Worker& Get() {
    if (w_ == nullptr) w_ = path_.Take(start_);
    return *w_;
  }
  // Records the worker's end and gives it back; the worker (null if none was taken).
  typename Path::Worker* Release() {
    typename Path::Worker* w = w_;
    if (w != nullptr) path_.Done(w);
    w_ = nullptr;
    return w;
  }

 private:
  Path& path_;
  cudaEvent_t start_;
  typename Path::Worker* w_ = nullptr;
};

// The leases of one chunk: a worker of each path that has one, taken only if the chunk needs it.
struct ChunkLeases {
  ChunkLeases(GpuDecoder::Impl& d, cudaEvent_t start) : cuda(d.cuda, start), jpeg2000(d.jpeg2000, start) {}
  WorkerLease<CudaPath> cuda;
  WorkerLease<Jpeg2000Path> jpeg2000;
};

// The host items: item k < cpu_n is the CPU list's k-th, then the nvJPEG2000 list's, then the CUDA
// list's. Which list and which sample item k is.
struct HostItem {
  DecodePath path;
  int64_t index;  // in its list
};
HostItem ItemOf(int64_t k, int64_t cpu_n, int64_t jpeg2000_n) {
  if (k < cpu_n) return {DecodePath::kCpu, k};
  if (k < cpu_n + jpeg2000_n) return {DecodePath::kJpeg2000, k - cpu_n};
  return {DecodePath::kCuda, k - cpu_n - jpeg2000_n};
}
int SampleOf(const GpuDecoder::Impl& d, HostItem item) {
  const std::vector<int>& list = item.path == DecodePath::kCpu        ? d.cpu_list
                                 : item.path == DecodePath::kJpeg2000 ? d.jpeg2000_list
                                                                      : d.cuda_list;
  return list[static_cast<size_t>(item.index)];
}

// The order the host items are taken in (d.item_order): costliest first when
// host_costliest_first, else list order. Cost: the whole image's pixels (both JPEG host paths
// decode the whole scan; the CPU path a baseline JPEG's rows down to the window's last), times 3
// for progressive JPEGs and CPU decodes (measured ~3x per pixel against host-Huffman baseline) and
// for JPEG 2000 on nvJPEG2000 (not measured: its host phase and state waits taken as costly as a
// CPU decode, so a large one starts early).
void OrderByCost(GpuDecoder::Impl& d, const std::vector<GpuDecodeSample>& samples, int64_t cpu_n) {
  const int64_t jpeg2000_n = static_cast<int64_t>(d.jpeg2000_list.size());
  const int64_t items = cpu_n + jpeg2000_n + static_cast<int64_t>(d.cuda_list.size());
  d.item_order.resize(static_cast<size_t>(items));
  std::iota(d.item_order.begin(), d.item_order.end(), int64_t{0});
  if (!d.options.host_costliest_first) return;
  d.item_cost.resize(static_cast<size_t>(items));
  for (int64_t k = 0; k < items; ++k) {
    const HostItem item = ItemOf(k, cpu_n, jpeg2000_n);
    const GpuDecodeSample& smp = samples[static_cast<size_t>(SampleOf(d, item))];
    int64_t pixels = Pixels(smp);
    // libjpeg stops a baseline JPEG's decode after the window's last row (decode_cpu.cc).
    if (item.path == DecodePath::kCpu && smp.is_jpeg && !smp.progressive) pixels = smp.width * (smp.roi.y + smp.roi.h);
    d.item_cost[static_cast<size_t>(k)] = pixels * (item.path != DecodePath::kCuda || smp.progressive ? 3 : 1);
  }
  std::stable_sort(d.item_order.begin(), d.item_order.end(), [&](int64_t a, int64_t b) {
    return d.item_cost[static_cast<size_t>(a)] > d.item_cost[static_cast<size_t>(b)];
  });
}

}  // namespace

void GpuDecoder::Decode(const std::vector<GpuDecodeSample>& samples, const Workspace& ws,
                        const CpuDecodeFn& cpu_decode, const DescribeFn& describe, const std::string& where) {
  Impl& d = *impl_;
  const int n = static_cast<int>(samples.size());
  const StreamView stream = ws.stream();
  const int s = ws.slot();
  if (d.options.device < 0) CONVEYOR_CUDA_CHECK(cudaGetDevice(&d.options.device));
  const int device = d.options.device;
  cuda::DeviceGuard guard(device);
  const auto call_start = Clock::now();
  Impl::SlotEvents& slot = d.Slot(s);
  // This slot's host buffers were last read by its previous call; under the executor that work has
  // finished already, so this returns at once.
  GpuDecoderCounters call;
  call.calls = 1;
  call.slot_pending_calls = slot.done.Query() ? 0 : 1;
  slot.done.Synchronize();
  call.slot_wait_seconds = SecondsSince(call_start);
  if (d.engines.ready()) {
    const auto [pixels, seconds] = d.engines.ReadTimes(s, call);
    d.balances[slot.choice].AddEngines(pixels, seconds);
  }
  // Images decoded ahead for this call (DecodeAhead): copied in after phase B, not routed.
  std::vector<AheadPath::Job*>& claimed = d.claimed;
  d.ahead.Claim(ws.iteration(), samples, claimed, &call.ahead_taken_back);
  struct ReleaseClaimed {
    AheadPath& ahead;
    std::vector<AheadPath::Job*>& claimed;
    ~ReleaseClaimed() { ahead.Release(claimed); }  // after Deliver: nothing left
  } release_claimed{d.ahead, claimed};
  auto sample_where = [&](int i) { return where + ": sample " + std::to_string(i) + " (" + describe(i) + ")"; };
  const int channels = DecodeChannels(d.options.color);

  // A: every image's route; the balanced ones split by pixels; the engines' support check.
  const auto a_start = Clock::now();
  if (!d.jpeg2000_tried) {  // nvJPEG2000 is loaded only for decoders that meet JPEG 2000
    for (const GpuDecodeSample& smp : samples) {
      if (smp.is_jpeg2000) {
        d.InitJpeg2000();
        break;
      }
    }
  }
  for (auto* list : {&d.balanced, &d.cuda_list, &d.cpu_list, &d.jpeg2000_list, &d.refused, &d.fallbacks}) {
    list->clear();
  }
  for (auto& group : d.engine_groups) group.clear();
  d.balanced_pixels.clear();
  double engines_fixed = 0, cuda_fixed = 0;  // pixels routed to one GPU path only
  for (int i = 0; i < n; ++i) {
    if (claimed[static_cast<size_t>(i)] != nullptr) continue;
    const GpuDecodeSample& smp = samples[static_cast<size_t>(i)];
    const Route r = d.router.RouteOf(FactsOf(smp));
    if (r.first == DecodePath::kCpu) {
      d.cpu_list.push_back(i);
    } else if (r.first == DecodePath::kJpeg2000) {
      d.jpeg2000_list.push_back(i);
    } else if (r.first == DecodePath::kCuda) {
      d.cuda_list.push_back(i);
      cuda_fixed += static_cast<double>(Pixels(smp));
    } else if (r.balanced) {
      d.balanced.push_back(i);
      d.balanced_pixels.push_back(Pixels(smp));
    } else {
      d.engine_groups[static_cast<int>(r.group)].push_back(i);
      engines_fixed += static_cast<double>(Pixels(smp));
    }
  }
  slot.choice = d.tuner.choice();
  DecodeBalance& balance = d.balances[slot.choice];
  balance.Split(d.balanced_pixels, d.to_engines, engines_fixed, cuda_fixed);
  for (size_t k = 0; k < d.balanced.size(); ++k) {
    (d.to_engines[k] ? d.engine_groups[static_cast<int>(EngineGroup::k420)] : d.cuda_list).push_back(d.balanced[k]);
  }
  bool engines = false;
  for (const auto& group : d.engine_groups) engines |= !group.empty();
  int parts = 0;
  const int64_t route_ns = NsSince(a_start);
  int64_t check_ns = 0;
  // engines_check_beside: the engines' support check runs on the engines' side of phase B (the
  // host queue starts meanwhile); what it refuses is decoded after phase B's join (B2).
  const bool check_beside = engines && d.options.engines_check_beside;
  if (engines) {
    d.engines.Begin(s, stream);
    d.engines.Assign(s, d.engine_groups, samples, d.tuner.parts());
    if (!check_beside) {
      const auto check_start = Clock::now();
      d.engines.Check(s, samples, ws, sample_where, &d.refused, &call.hw_unchecked);
      check_ns = NsSince(check_start);
    }
    parts = d.engines.parts_used(s);
    const DecodePath next = d.router.Next(DecodePath::kEngines);
    for (int i : d.refused) {
      if (next == DecodePath::kCuda) {
        d.cuda_list.push_back(i);
      } else {
        d.cpu_list.push_back(i);
        ++call.fallbacks;
      }
    }
  }
  call.classify_seconds = SecondsSince(a_start);

  // B: the engines' parts on threads of their own (RunBeside), the CPU images (listed first),
  // nvJPEG2000's and the CUDA backend's over the pool's other threads.
  const auto b_start = Clock::now();
  const int64_t call_index = d.calls_made++;
  std::unique_ptr<DecodeTrace> trace;
  if (d.options.trace_calls > 0 && call_index >= d.options.trace_from &&
      call_index < d.options.trace_from + d.options.trace_calls) {
    trace = std::make_unique<DecodeTrace>(call_index);
  }
  const int64_t phase_a_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(b_start - a_start).count();
  d.cpu.Prepare(s, CpuPath::kRouted, d.cpu_list, samples, channels);
  const int64_t cpu_n = static_cast<int64_t>(d.cpu_list.size());
  const int64_t cuda_n = static_cast<int64_t>(d.cuda_list.size());
  const int64_t jpeg2000_n = static_cast<int64_t>(d.jpeg2000_list.size());
  if (cuda_n > 0 || jpeg2000_n > 0 || check_beside) slot.start.Record(stream);
  std::vector<uint8_t> cuda_refused(static_cast<size_t>(n), 0), jpeg2000_refused(static_cast<size_t>(n), 0);
  std::mutex used_mu;
  std::vector<CudaPath::Worker*> used;
  std::vector<Jpeg2000Path::Worker*> used_jpeg2000;
  std::atomic<int64_t> cuda_end_ns{0}, cpu_ns{0}, hw_start_ns{-1}, jpeg2000_ns{0};
  CudaTimes cuda_times;
  auto engines_part = [&](int p) {
    int64_t none = -1;
    hw_start_ns.compare_exchange_strong(none, NsSince(b_start));
    d.engines.DecodePart(s, p, samples, stream, where, b_start, trace.get());
  };
  // Parts first..parts-1: the first on this thread, the rest beside it (RunBeside, recursively).
  std::function<void(int)> engines_from = [&](int first) {
    if (first == parts - 1) return engines_part(first);
    ws.RunBeside([&] { engines_part(first); }, [&] { engines_from(first + 1); });
  };
  // One CPU, nvJPEG2000 or CUDA-backend image (item k: ItemOf).
  auto host_item = [&](ChunkLeases& lease, int64_t k) {
    const auto t0 = Clock::now();
    TracedImage traced;
    const HostItem item = ItemOf(k, cpu_n, jpeg2000_n);
    traced.image = SampleOf(d, item);
    traced.path = item.path;
    if (item.path == DecodePath::kCpu) {
      d.cpu.Decode(s, CpuPath::kRouted, static_cast<size_t>(item.index), cpu_decode);
      cpu_ns += NsSince(t0);
    } else if (item.path == DecodePath::kJpeg2000) {
      const int i = traced.image;
      if (!d.jpeg2000.Decode(lease.jpeg2000.Get(), samples[static_cast<size_t>(i)], sample_where(i))) {
        jpeg2000_refused[static_cast<size_t>(i)] = 1;  // the CPU path takes it in phase C
      }
      jpeg2000_ns += NsSince(t0);
    } else {
      const int i = traced.image;
      try {
        d.cuda.Decode(lease.cuda.Get(), samples[static_cast<size_t>(i)], sample_where(i), cuda_times,
                      trace ? &traced : nullptr);
      } catch (const NvjpegError& e) {
        // Refused, or damage nvJPEG found in the data: the CPU decodes it, or names the damage
        // (a SampleError, which on_error: skip acts on).
        if (!IsRefusal(e.status()) && !IsDamage(e.status())) throw;
        cuda_refused[static_cast<size_t>(i)] = 1;
      }
      StoreMax(cuda_end_ns, NsSince(b_start));
    }
    if (trace) {
      const GpuDecodeSample& smp = samples[static_cast<size_t>(traced.image)];
      traced.pixels = Pixels(smp);
      traced.progressive = smp.progressive;
      traced.subsampling = smp.subsampling;
      traced.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t0 - b_start).count();
      traced.end_ns = NsSince(b_start);
      trace->AddImage(traced);
    }
  };
  auto give_back = [&](ChunkLeases& lease) {
    CudaPath::Worker* w = lease.cuda.Release();
    Jpeg2000Path::Worker* w2 = lease.jpeg2000.Release();
    std::lock_guard<std::mutex> lock(used_mu);
    if (w != nullptr) used.push_back(w);
    if (w2 != nullptr) used_jpeg2000.push_back(w2);
  };
  const int64_t items = cpu_n + jpeg2000_n + cuda_n;
  const int64_t lanes =
      std::min<int64_t>(items, ws.thread_pool() != nullptr ? std::max(1, ws.thread_pool()->num_threads()) : 1);
  OrderByCost(d, samples, cpu_n);
  std::atomic<int64_t> next_item{0};
  auto host_items = [&] {
    if (!d.options.host_costliest_first) {  // TBB's chunks of the lists, in list order
      ws.ParallelFor(items, 1, [&](int64_t begin, int64_t end) {
        cuda::DeviceGuard chunk_guard(device);
        ChunkLeases lease(d, slot.start.get());  // a path's worker only when the chunk has its images
        for (int64_t k = begin; k < end; ++k) host_item(lease, k);
        give_back(lease);
      });
      return;
    }
    // One queue, costliest first: each lane takes the next image until none is left.
    ws.ParallelFor(lanes, 1, [&](int64_t, int64_t) {
      cuda::DeviceGuard chunk_guard(device);
      ChunkLeases lease(d, slot.start.get());
      try {
        for (int64_t q = next_item++; q < items; q = next_item++) host_item(lease, d.item_order[static_cast<size_t>(q)]);
      } catch (...) {
        next_item = items;  // the other lanes stop taking images
        throw;
      }
      give_back(lease);
    });
  };
  auto engines_side = [&] {
    if (check_beside) {
      const auto check_start = Clock::now();
      d.engines.Check(s, samples, ws, sample_where, &d.refused, &call.hw_unchecked);
      check_ns = NsSince(check_start);
    }
    engines_from(0);
  };
  if (parts > 0 && items > 0) {
    ws.RunBeside(engines_side, host_items);
  } else if (parts > 0) {
    engines_side();
  } else {
    host_items();
  }
  // B2: the images of engines' calls that failed (and, with engines_check_beside, those the check
  // refused), down the engines' chain.
  std::vector<int> late;
  if (check_beside) late = d.refused;
  if (engines) d.engines.TakeFailed(s, stream, &late, call);
  if (!late.empty()) {
    if (d.router.Next(DecodePath::kEngines) == DecodePath::kCuda) {
      const int64_t first = static_cast<int64_t>(d.cuda_list.size());
      d.cuda_list.insert(d.cuda_list.end(), late.begin(), late.end());
      if (!check_beside) slot.start.Record(stream);  // after the failed calls' work (TakeFailed waited)
      ws.ParallelFor(static_cast<int64_t>(late.size()), 1, [&](int64_t begin, int64_t end) {
        cuda::DeviceGuard chunk_guard(device);
        ChunkLeases lease(d, slot.start.get());
        for (int64_t k = begin; k < end; ++k) host_item(lease, cpu_n + jpeg2000_n + first + k);
        give_back(lease);
      });
    } else {
      d.fallbacks.insert(d.fallbacks.end(), late.begin(), late.end());
    }
  }
  for (const CudaPath::Worker* w : used) {  // a worker used twice: its last record covers both
    CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), CudaPath::EndEvent(w), 0));
  }
  for (const Jpeg2000Path::Worker* w : used_jpeg2000) {
    CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), Jpeg2000Path::EndEvent(w), 0));
  }
  if (engines) d.engines.End(s, stream, call);
  // The images decoded ahead, copied in; any that failed there go to the CPU path with the fallbacks.
  int64_t ahead_wait_ns = 0;
  d.ahead.Deliver(claimed, samples, channels, stream, &d.fallbacks, &call.images_ahead, &ahead_wait_ns);
  call.ahead_wait_seconds = static_cast<double>(ahead_wait_ns) / 1e9;

  // C: what the CUDA backend and nvJPEG2000 refused goes down its chain (the CPU); every CPU
  // image's upload.
  const auto c_start = Clock::now();
  int64_t jpeg2000_fallbacks = 0;
  for (int i : d.jpeg2000_list) {
    if (jpeg2000_refused[static_cast<size_t>(i)]) {
      d.fallbacks.push_back(i);
      ++jpeg2000_fallbacks;
    }
  }
  int64_t cuda_pixels = 0;
  int64_t cuda_decoded = 0;  // the list holds the engines' failures sent to the CUDA backend too
  for (int i : d.cuda_list) {
    if (cuda_refused[static_cast<size_t>(i)]) {
      d.fallbacks.push_back(i);
    } else {
      cuda_pixels += Pixels(samples[static_cast<size_t>(i)]);
      ++cuda_decoded;
    }
  }
  if (!d.fallbacks.empty()) {
    d.cpu.Prepare(s, CpuPath::kFallback, d.fallbacks, samples, channels);
    ws.ParallelFor(static_cast<int64_t>(d.fallbacks.size()), 1, [&](int64_t begin, int64_t end) {
      const auto t0 = Clock::now();
      for (int64_t k = begin; k < end; ++k) d.cpu.Decode(s, CpuPath::kFallback, static_cast<size_t>(k), cpu_decode);
      cpu_ns += NsSince(t0);
    });
    d.cpu.Upload(s, CpuPath::kFallback, samples, channels, stream);
  }
  d.cpu.Upload(s, CpuPath::kRouted, samples, channels, stream);
  slot.done.Record(stream);
  const auto c_end = Clock::now();
  if (trace) {
    trace->SetPhaseA(route_ns, check_ns, phase_a_ns);  // with check_beside, the check ran in phase B
    std::cerr << trace->Line() << "\n";
  }

  const double cuda_s = static_cast<double>(cuda_end_ns.load()) / 1e9;
  balance.AddCuda(static_cast<double>(cuda_pixels), cuda_s);
  call.images_cuda = cuda_decoded + call.images_ahead;
  call.images_jpeg2000 = jpeg2000_n - jpeg2000_fallbacks;
  call.jpeg2000_seconds = static_cast<double>(jpeg2000_ns.load()) / 1e9;
  call.images_cpu = cpu_n + static_cast<int64_t>(d.fallbacks.size());
  call.fallbacks += static_cast<int64_t>(d.fallbacks.size());
  call.cuda_seconds = cuda_s;
  call.cuda_host_seconds = static_cast<double>(cuda_times.host_ns.load()) / 1e9;
  call.images_cuda_shared = cuda_times.shared_images.load();
  call.cuda_pinned_wait_seconds = static_cast<double>(cuda_times.pinned_wait_ns.load()) / 1e9;
  call.cuda_issue_seconds = static_cast<double>(cuda_times.issue_ns.load()) / 1e9;
  call.cpu_seconds = static_cast<double>(cpu_ns.load()) / 1e9;
  call.hw_start_seconds = static_cast<double>(std::max<int64_t>(0, hw_start_ns.load())) / 1e9;
  call.phase_b_seconds = std::chrono::duration<double>(c_start - b_start).count();
  call.phase_c_seconds = std::chrono::duration<double>(c_end - c_start).count();
  call.call_seconds = SecondsSince(call_start);
  if (d.tuner.tuned()) {
    double cost = 0;
    for (const GpuDecodeSample& smp : samples) cost += TunerCost(Pixels(smp), smp.progressive);
    d.tuner.Record(call.call_seconds, cost);
  }
  d.Account(call);
}

}  // namespace conveyor::ops
