// Which path decodes an image: the GPU decoder's one routing policy, GPU-free and unit-tested.
//
//   image facts (format, subsampling, progressive, size) ──> Route: first path, engines' group,
//                                                            balanced or not
//   a path refuses an image ──> Next(path): the next path of its chain, ending on the CPU
//
// | image                                  | route                                               |
// |----------------------------------------|-----------------------------------------------------|
// | JPEG 2000, nvJPEG2000 loaded           | the nvJPEG2000 path (any DecodePaths but kCpuOnly)  |
// | not JPEG (PNG), arithmetic-coded, empty| CPU (decode, then upload)                           |
// | progressive JPEG                       | `progressive` option: CUDA backend (default) or CPU;|
// |                                        | up to progressive_cpu_pixels: CPU                   |
// | baseline 4:2:0                         | engines or CUDA backend, split by the balancer      |
// | baseline 4:2:0, more than              | the engines' 4:2:0 call, not balanced (off: every   |
// |   engines_only_pixels (set)            | size balanced)                                      |
// | baseline 4:4:4, 4:2:2, 4:4:0, gray, ...| `other_chroma` option: CUDA backend (default), the  |
// |                                        | engines in calls of their own, one per kind, or CPU |
// | the same, more than other_engines_pixels| engines, the large group's call (not balanced)     |
// | baseline, more than large_pixels (set) | engines, in calls of their own (GpuDecoder: off)    |
// | a forced path (DecodePaths)            | that path; refusals fall back as below              |
//
// Chains: engines → CUDA backend → CPU (engines → CPU when only the engines may decode); CUDA
// backend → CPU; nvJPEG2000 → CPU. Where nvJPEG, nvJPEG2000 or the engines are missing, their
// images take the next path.
// Measurements behind the defaults (H100, H200) are in docs/decoding_measurements.md, "Routing on the realistic set".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "operators/decoders/image_info.h"

namespace conveyor::ops {

// Which paths may decode (tests and benchmarks force one; kAuto routes).
enum class DecodePaths { kAuto, kHardwareOnly, kCudaOnly, kCpuOnly };

enum class DecodePath : uint8_t { kEngines, kCuda, kCpu, kJpeg2000 };
const char* DecodePathName(DecodePath p);  // "engines", "CUDA backend", "CPU", "nvJPEG2000"

// Where progressive JPEGs go (the engines take baseline only).
enum class ProgressiveRoute { kCpu, kCuda };
// Where baseline JPEGs other than 4:2:0 go: a minority in a batch of 4:2:0 photos.
enum class OtherChromaRoute { kEnginesOwnCall, kCuda, kCpu };

// The engines' calls: images of one group only in each nvJPEG call (each call has its own nvJPEG
// state, whose buffers are sized by its own images).
enum class EngineGroup : uint8_t { k420, kOther, kLarge };
inline constexpr int kEngineGroups = 3;

// What the router needs to know of one image (from its header, image_info.h).
struct RouteFacts {
  bool jpeg = false;  // a JPEG nvJPEG may take (not arithmetic-coded)
  bool jpeg2000 = false;  // a JPEG 2000 file nvJPEG2000 may take (its path refuses what it cannot do)
  bool progressive = false;
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;
  bool empty = false;  // nothing to decode (zero-sized window)
  int64_t pixels = 0;  // the whole image's
};

struct Route {
  DecodePath first = DecodePath::kCpu;
  EngineGroup group = EngineGroup::k420;
  // Engines or CUDA backend by the balancer's share (first is then the engines).
  bool balanced = false;
};

struct RouterConfig {
  bool nvjpeg = false;   // nvJPEG loaded (CUDA backend usable)
  bool nvjpeg2k = false;  // nvJPEG2000 loaded (its path usable)
  bool engines = false;  // hardware engines usable
  DecodePaths paths = DecodePaths::kAuto;
  ProgressiveRoute progressive = ProgressiveRoute::kCuda;
  OtherChromaRoute other_chroma = OtherChromaRoute::kCuda;
  int64_t large_pixels = 4'000'000;  // larger baseline images: the engines' large group
  // Baseline 4:2:0 JPEGs above this many pixels: the engines' 4:2:0 call, never the CUDA backend
  // by the balance (whose workers' buffers then stay sized for smaller images).
  int64_t engines_only_pixels = std::numeric_limits<int64_t>::max();
  // Progressive JPEGs up to this many pixels go to the CPU path whatever `progressive` says (0: none).
  int64_t progressive_cpu_pixels = 0;
  // large_pixels for baseline JPEGs other than 4:2:0, where lower: above it they go to the engines'
  // large group, whatever `other_chroma` says. One such photo on one CUDA-backend thread outlasts the rest of its call.
  int64_t other_engines_pixels = std::numeric_limits<int64_t>::max();
};

class DecodeRouter {
 public:
  explicit DecodeRouter(const RouterConfig& config) : config_(config) {}
  Route RouteOf(const RouteFacts& facts) const;
  // The path an image goes to when `refused_by` refuses it; kCpu refusing is an error, not a route.
  DecodePath Next(DecodePath refused_by) const;
  const RouterConfig& config() const { return config_; }

 private:
  RouterConfig config_;
};

// A CUDA-backend image's host-side cost for ordering work: its pixels, x3 when progressive (whose
// Huffman decoding and device phase cost ~3x per pixel).
inline int64_t HostCost(const RouteFacts& f) { return f.progressive ? 3 * f.pixels : f.pixels; }

// Look-ahead (GpuDecoder::DecodeAhead): the images of a later call worth starting before it — those
// the router sends to the CUDA backend alone (not balanced with the engines) whose HostCost is at
// least `min_cost`, and, when `balanced_min_pixels` > 0, those the balance would split between the
// engines and the CUDA backend with at least that many pixels — costliest first (ties by index), at
// most `max_images`. min_cost 0: none. Indices into `facts`.
std::vector<int> PickAhead(const DecodeRouter& router, const std::vector<RouteFacts>& facts, int64_t min_cost,
                           int max_images, int64_t balanced_min_pixels = 0);

// "progressive" / "other_chroma" option values, for messages and the CLI: "cpu", "cuda",
// "engines_own_call" (other_chroma only). Parse* throw InvalidArgument naming `what`, the value and the choices.
ProgressiveRoute ParseProgressiveRoute(const std::string& value, const std::string& what);
OtherChromaRoute ParseOtherChromaRoute(const std::string& value, const std::string& what);

}  // namespace conveyor::ops
