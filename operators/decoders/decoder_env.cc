#include "operators/decoders/decoder_env.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"

namespace conveyor::ops {
namespace {

// A "0"/"1" switch; anything else is refused, naming the variable, what each value means and what came.
void Switch(const char* name, const char* off, const char* on, bool& to) {
  const char* v = std::getenv(name);
  if (v == nullptr) return;
  if (std::strcmp(v, "1") == 0) {
    to = true;
  } else if (std::strcmp(v, "0") == 0) {
    to = false;
  } else {
    throw Error(std::string(name) + ": expected 0 (" + off + ") or 1 (" + on + "), got \"" + v + "\"");
  }
}

// A whole number in [lo, hi].
void WholeNumber(const char* name, int lo, int hi, int& to) {
  const char* v = std::getenv(name);
  if (v == nullptr) return;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != 0 || n < lo || n > hi) {
    throw Error(std::string(name) + ": expected a whole number from " + std::to_string(lo) + " to " +
                std::to_string(hi) + ", got \"" + v + "\"");
  }
  to = static_cast<int>(n);
}

// A size given in kilopixels, whole, in [lo, hi]; stored in pixels.
// Unset: `pixels` stays as it is (an option's value need not be whole kilopixels).
void Kilopixels(const char* name, int lo, int hi, int64_t& pixels) {
  if (std::getenv(name) == nullptr) return;
  int kilopixels = 0;
  WholeNumber(name, lo, hi, kilopixels);
  pixels = int64_t{kilopixels} * 1000;
}

}  // namespace

void ApplyDecoderEnv(GpuDecoderOptions& o) {
  Switch("CONVEYOR_JPEG_ENGINES", "hardware JPEG engines off", "on", o.engines);
  WholeNumber("CONVEYOR_JPEG_ENGINE_THREADS", 1, 4, o.engine_threads);
  Switch("CONVEYOR_JPEG_ENGINE_PARTS_TUNED", "always engine_threads handles",
         "each call's handles timed against one, the faster kept", o.engine_parts_tuned);
  Switch("CONVEYOR_JPEG_SHARE_TUNED", "the automatic balance always",
         "the balance timed against every 4:2:0 image on the engines, the faster kept", o.engines_share_tuned);
  Switch("CONVEYOR_JPEG_ENGINES_WAIT", "engines do not wait for earlier stream work", "they wait", o.engines_wait);
  Switch("CONVEYOR_JPEG_HW_PIPELINE", "NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE on the engines' handles",
         "nvJPEG's default", o.engines_pipeline);
  Switch("CONVEYOR_JPEG_PREALLOC_GROW", "preallocate the engines' pool once", "again for each larger batch or image",
         o.engines_prealloc_grow);
  Switch("CONVEYOR_JPEG_PREALLOC_ALL", "only the 4:2:0 engines' call preallocates", "every engines' call does",
         o.engines_prealloc_all);
  Switch("CONVEYOR_JPEG_PREALLOC_AREA", "preallocate for the largest width by the largest height",
         "for a square of the largest image's pixels", o.engines_prealloc_by_area);
  Switch("CONVEYOR_JPEG_PREALLOC_TYPICAL", "preallocate for the call's largest image",
         "for its median image by pixels", o.engines_prealloc_typical);
  Switch("CONVEYOR_JPEG_ENGINES_INTERPOLATION", "the engines convert to RGB themselves",
         "NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION on their handles", o.engines_interpolated_upsampling);
  Switch("CONVEYOR_JPEG_ENGINES_SORTED", "each engines' call in the balance's order",
         "each engines' call sorted by size, largest first", o.engines_sorted);
  Switch("CONVEYOR_JPEG_MEMORY_POOLS", "nvJPEG's default allocations on the engines' handles",
         "NVJPEG_FLAGS_ENABLE_MEMORY_POOLS on them", o.engines_memory_pools);
  WholeNumber("CONVEYOR_JPEG_CUDA_PINNED", 2, 16, o.cuda_pinned_buffers);
  WholeNumber("CONVEYOR_JPEG_CUDA_STATES", 1, 16, o.cuda_states);
  WholeNumber("CONVEYOR_JPEG_PINNED_HIGH_WATER_MB", 0, 4096, o.cuda_pinned_high_water_mb);
  WholeNumber("CONVEYOR_JPEG_TRACE", 0, 1000, o.trace_calls);
  WholeNumber("CONVEYOR_JPEG_TRACE_FROM", 0, 1000000, o.trace_from);
  if (const char* v = std::getenv("CONVEYOR_JPEG_PROGRESSIVE")) {
    o.progressive = ParseProgressiveRoute(v, "CONVEYOR_JPEG_PROGRESSIVE");
  }
  if (const char* v = std::getenv("CONVEYOR_JPEG_OTHER_CHROMA")) {
    o.other_chroma = ParseOtherChromaRoute(v, "CONVEYOR_JPEG_OTHER_CHROMA");
  }
  Kilopixels("CONVEYOR_JPEG_HYBRID_KPIXELS", 0, 1000000, o.hybrid_huffman_threshold);
  int progressive_kilopixels = -1;
  WholeNumber("CONVEYOR_JPEG_PROGRESSIVE_HYBRID_KPIXELS", 0, 1000000, progressive_kilopixels);
  if (progressive_kilopixels >= 0) o.progressive_huffman_threshold = int64_t{progressive_kilopixels} * 1000;
  Switch("CONVEYOR_JPEG_COSTLIEST_FIRST", "CPU/CUDA images in TBB chunks, list order",
         "one queue, costliest first", o.host_costliest_first);
  Switch("CONVEYOR_JPEG_CHECK_BESIDE", "the engines' check in phase A", "on the engines' side of phase B",
         o.engines_check_beside);
  if (const char* v = std::getenv("CONVEYOR_JPEG_ENGINES_CHECK")) {
    if (std::strcmp(v, "always") == 0) {
      o.engines_check = EnginesCheck::kAlways;
    } else if (std::strcmp(v, "common") == 0) {
      o.engines_check = EnginesCheck::kTrustCommon;
    } else if (std::strcmp(v, "never") == 0) {
      o.engines_check = EnginesCheck::kNever;
    } else {
      throw Error(std::string("CONVEYOR_JPEG_ENGINES_CHECK: expected always, common (trusted without the check) or "
                              "never, got \"") + v + "\"");
    }
  }
  Kilopixels("CONVEYOR_JPEG_PROGRESSIVE_CPU_KPIXELS", 0, 1000000, o.progressive_cpu_pixels);
  Kilopixels("CONVEYOR_JPEG_ENGINES_IMAGE_KPIXELS", 0, 100000, o.engines_image_cost_px);
  Kilopixels("CONVEYOR_JPEG_ENGINES_CALL_KPIXELS", 0, 1000000, o.engines_call_cost_px);
  Kilopixels("CONVEYOR_JPEG_ENGINES_ONLY_KPIXELS", 0, 1000000, o.engines_only_pixels);
  Kilopixels("CONVEYOR_JPEG_OTHER_ENGINES_KPIXELS", 0, 1000000, o.other_engines_pixels);
  Kilopixels("CONVEYOR_JPEG_CUDA_SHARED_KPIXELS", 0, 1000000, o.cuda_shared_pixels);
  WholeNumber("CONVEYOR_JPEG_CUDA_SHARED_STATES", 1, 16, o.cuda_shared_states);
  Kilopixels("CONVEYOR_JPEG_LARGE_KPIXELS", 1, 1000000, o.large_pixels);
  Kilopixels("CONVEYOR_JPEG_AHEAD_KPIXELS", 0, 1000000, o.ahead_cost);
  Kilopixels("CONVEYOR_JPEG_AHEAD_BALANCED_KPIXELS", 0, 1000000, o.ahead_balanced_pixels);
  WholeNumber("CONVEYOR_JPEG_AHEAD_IMAGES", 1, 64, o.ahead_images);
  WholeNumber("CONVEYOR_JPEG_AHEAD_THREADS", 1, 16, o.ahead_threads);
  WholeNumber("CONVEYOR_JPEG_AHEAD_BUFFERS", 1, 64, o.ahead_buffers);
  if (const char* v = std::getenv("CONVEYOR_NVJPEG2K_PATH")) o.nvjpeg2k_path = v;
  if (const char* v = std::getenv("CONVEYOR_JPEG_HW_LOAD")) {
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (end == v || *end != 0 || !(x == -1 || (x >= 0 && x <= 1))) {
      throw Error(std::string("CONVEYOR_JPEG_HW_LOAD: expected -1 (automatic) or a share from 0 to 1, got \"") + v +
                  "\"");
    }
    o.hw_load = x;
  }
}

}  // namespace conveyor::ops
