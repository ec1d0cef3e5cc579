// GpuDecoder's set-up: the tools' options hook, nvJPEG's paths made and released, the per-slot
// events, the decoder's and the process's counters.
#include <iostream>
#include <limits>
#include <mutex>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "operators/decoders/gpu_decoder_impl.h"

namespace conveyor::ops {
namespace {

std::mutex hook_mu;
DecoderOptionsHook options_hook = nullptr;

std::mutex process_counters_mu;
GpuDecoderCounters process_counters;
std::vector<const GpuDecoder::Impl*> live_decoders;  // their nvJPEG memory sums into the process's

}  // namespace

void SetDecoderOptionsHook(DecoderOptionsHook hook) {
  std::lock_guard<std::mutex> lock(hook_mu);
  options_hook = hook;
}

GpuDecoderCounters ProcessGpuDecoderCounters() {
  std::lock_guard<std::mutex> lock(process_counters_mu);
  GpuDecoderCounters c = process_counters;
  for (const GpuDecoder::Impl* d : live_decoders) {
    c.cuda_memory += d->cuda.memory();
    c.engines_memory += d->engines.memory();
  }
  return c;
}

void GpuDecoder::Impl::Unavailable(const std::string& why) {
  std::cerr << "conveyor: decoders (device gpu): nvJPEG unavailable, decoding on the CPU and uploading: " << why
            << "\n";
  counters.nvjpeg_available = false;
  counters.unavailable_reason = why;
}

void GpuDecoder::Impl::InitJpeg2000() {
  jpeg2000_tried = true;
  if (options.paths == DecodePaths::kCpuOnly) return;
  std::string why;
  const nvjpeg2k::Nvjpeg2kLibrary* library = nvjpeg2k::SharedNvjpeg2k(options.nvjpeg2k_path, &why);
  if (library != nullptr) {
    try {
      cuda::DeviceGuard guard(options.device);
      jpeg2000.Init(*library, options.color);
    } catch (const Error& e) {
      jpeg2000.Destroy();
      why = e.what();
    }
  }
  std::lock_guard<std::mutex> lock(counters_mu);
  counters.nvjpeg2k_available = jpeg2000.ready();
  if (!jpeg2000.ready()) {
    std::cerr << "conveyor: decoders (device gpu): nvJPEG2000 unavailable, JPEG 2000 decoded on the CPU and "
                 "uploaded: " << why << "\n";
    counters.nvjpeg2k_unavailable_reason = why;
    return;
  }
  RouterConfig route = router.config();
  route.nvjpeg2k = true;
  router = DecodeRouter(route);
}

void GpuDecoder::Impl::Init() {
  counters.hw_share = 0;
  RouterConfig route;
  route.paths = options.paths;
  route.progressive = options.progressive;
  route.other_chroma = options.other_chroma;
  route.large_pixels = options.large_pixels;
  route.engines_only_pixels =
      options.engines_only_pixels > 0 ? options.engines_only_pixels : std::numeric_limits<int64_t>::max();
  route.progressive_cpu_pixels = options.progressive_cpu_pixels;
  route.other_engines_pixels =
      options.other_engines_pixels > 0 ? options.other_engines_pixels : std::numeric_limits<int64_t>::max();
  router = DecodeRouter(route);
  if (options.paths == DecodePaths::kCpuOnly) return;
  std::string why;
  lib = SharedNvjpeg(&why);
  if (lib == nullptr) return Unavailable(why);
  if (options.device < 0) CONVEYOR_CUDA_CHECK(cudaGetDevice(&options.device));
  cuda::DeviceGuard guard(options.device);
  const unsigned flags = options.interpolated_upsampling ? kFlagsUpsamplingWithInterpolation : 0;
  try {
    cuda.Init(*lib, options, flags);
  } catch (const Error& e) {
    cuda.Destroy();
    lib = nullptr;
    return Unavailable(e.what());
  }
  counters.nvjpeg_available = true;
  route.nvjpeg = true;
  if (options.paths != DecodePaths::kCudaOnly) {
    if (!options.engines) {
      counters.unavailable_reason = "hardware JPEG engines turned off (CONVEYOR_JPEG_ENGINES=0)";
    } else if (options.hw_load == 0) {
      counters.unavailable_reason = "hardware JPEG engines given no images (hw_decoder_load 0)";
    } else {
      const unsigned engine_flags =
          options.interpolated_upsampling && options.engines_interpolated_upsampling ? flags : 0;
      counters.unavailable_reason = engines.Init(*lib, options, engine_flags, counters);
      counters.hardware_available = engines.ready();
      route.engines = engines.ready();
    }
  }
  router = DecodeRouter(route);
  ahead.Init(cuda, router, options);
  const double fixed_share = options.paths == DecodePaths::kHardwareOnly ? 1.0 : options.hw_load;
  // The share is tuned only where it is automatic and the engines exist.
  const bool share_tuned = options.engines_share_tuned && fixed_share < 0 && engines.ready();
  tuner = PartsTuner(engines.parts(), options.engine_parts_tuned, options.engine_parts_schedule, share_tuned,
                     options.engines_share_margin);
  for (int c = 0; c < PartsTuner::kMaxChoices; ++c) {
    balances[c] = DecodeBalance(c < tuner.choices() && tuner.engines_only(c) ? 1.0 : fixed_share);
  }
  counters.hw_parts_chosen = tuner.parts();
  counters.hw_engines_only_chosen = tuner.engines_only();
  if (engines.ready()) counters.hw_share = balance().share();
}

GpuDecoder::Impl::SlotEvents& GpuDecoder::Impl::Slot(int s) {
  while (static_cast<int>(slots.size()) <= s) {
    auto slot = std::make_unique<SlotEvents>();
    slot->done = cuda::Event::Create();
    slot->start = cuda::Event::Create();
    slots.push_back(std::move(slot));
  }
  return *slots[static_cast<size_t>(s)];
}

void GpuDecoder::Impl::Account(const GpuDecoderCounters& call) {
  std::lock_guard<std::mutex> lock(counters_mu);
  counters.hw_rate = balance().engines_rate() / 1e6;
  counters.cuda_rate = balance().cuda_rate() / 1e6;
  if (engines.ready()) counters.hw_share = balance().share();
  counters.hw_parts_chosen = tuner.parts();
  counters.hw_engines_only_chosen = tuner.engines_only();
  AddCounters(counters, call);
  std::lock_guard<std::mutex> process_lock(process_counters_mu);
  AddCounters(process_counters, call);
  CopyLatest(process_counters, counters);
}

GpuDecoder::GpuDecoder(const GpuDecoderOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  {
    std::lock_guard<std::mutex> lock(hook_mu);
    if (options_hook != nullptr) options_hook(impl_->options);
  }
  impl_->Init();
  std::lock_guard<std::mutex> lock(process_counters_mu);
  live_decoders.push_back(impl_.get());
}

GpuDecoder::~GpuDecoder() {
  {
    std::lock_guard<std::mutex> lock(process_counters_mu);
    std::erase(live_decoders, impl_.get());
  }
  for (auto& slot : impl_->slots) {
    if (slot->done) CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventSynchronize(slot->done.get()));
  }
}

GpuDecoderCounters GpuDecoder::counters() const {
  GpuDecoderCounters c;
  {
    std::lock_guard<std::mutex> lock(impl_->counters_mu);
    c = impl_->counters;
  }
  c.cuda_memory = impl_->cuda.memory();
  c.engines_memory = impl_->engines.memory();
  return c;
}

const GpuDecoderOptions& GpuDecoder::options() const { return impl_->options; }

bool GpuDecoder::ahead_enabled() const { return impl_->ahead.enabled(); }

void GpuDecoder::DecodeAhead(int64_t key, const std::vector<GpuDecodeSample>& samples,
                             const std::function<bool(int)>& accept, const std::string& where) {
  impl_->ahead.Submit(key, samples, accept, where);
}

}  // namespace conveyor::ops
