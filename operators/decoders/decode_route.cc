#include "operators/decoders/decode_route.h"

#include <algorithm>

#include "core/error.h"

namespace conveyor::ops {

const char* DecodePathName(DecodePath p) {
  switch (p) {
    case DecodePath::kEngines: return "engines";
    case DecodePath::kCuda: return "CUDA backend";
    case DecodePath::kCpu: return "CPU";
    case DecodePath::kJpeg2000: return "nvJPEG2000";
  }
  return "?";
}

Route DecodeRouter::RouteOf(const RouteFacts& f) const {
  const RouterConfig& c = config_;
  Route r;
  if (f.jpeg2000 && !f.empty && c.nvjpeg2k && c.paths != DecodePaths::kCpuOnly) {
    r.first = DecodePath::kJpeg2000;
    return r;
  }
  if (!f.jpeg || f.empty || !c.nvjpeg || c.paths == DecodePaths::kCpuOnly) return r;  // CPU
  const bool is420 = f.subsampling == ChromaSubsampling::k420;
  const int64_t large = is420 ? c.large_pixels : std::min(c.large_pixels, c.other_engines_pixels);
  const EngineGroup group = f.pixels > large ? EngineGroup::kLarge : is420 ? EngineGroup::k420 : EngineGroup::kOther;
  switch (c.paths) {
    case DecodePaths::kCpuOnly: return r;
    case DecodePaths::kCudaOnly:
      r.first = DecodePath::kCuda;
      return r;
    case DecodePaths::kHardwareOnly:
      if (c.engines) r = Route{DecodePath::kEngines, group, false};
      return r;
    case DecodePaths::kAuto: break;
  }
  if (f.progressive) {  // the engines take baseline only
    const bool cpu = c.progressive == ProgressiveRoute::kCpu || f.pixels <= c.progressive_cpu_pixels;
    r.first = cpu ? DecodePath::kCpu : DecodePath::kCuda;
    return r;
  }
  if (!c.engines) {
    r.first = DecodePath::kCuda;
    return r;
  }
  if (group == EngineGroup::kLarge) return Route{DecodePath::kEngines, group, false};
  if (group == EngineGroup::kOther) {
    r.first = c.other_chroma == OtherChromaRoute::kCuda  ? DecodePath::kCuda
              : c.other_chroma == OtherChromaRoute::kCpu ? DecodePath::kCpu
                                                         : DecodePath::kEngines;
    r.group = group;
    return r;
  }
  return Route{DecodePath::kEngines, EngineGroup::k420, f.pixels <= c.engines_only_pixels};
}

DecodePath DecodeRouter::Next(DecodePath refused_by) const {
  if (refused_by == DecodePath::kEngines && config_.nvjpeg && config_.paths == DecodePaths::kAuto) {
    return DecodePath::kCuda;
  }
  return DecodePath::kCpu;
}

std::vector<int> PickAhead(const DecodeRouter& router, const std::vector<RouteFacts>& facts, int64_t min_cost,
                           int max_images, int64_t balanced_min_pixels) {
  std::vector<int> picked;
  if (max_images <= 0 || min_cost <= 0) return picked;
  for (size_t i = 0; i < facts.size(); ++i) {
    const RouteFacts& f = facts[i];
    const bool costly = HostCost(f) >= min_cost;
    const bool large = balanced_min_pixels > 0 && f.pixels >= balanced_min_pixels;
    if (f.empty || (!costly && !large)) continue;  // most images: no route needed
    const Route r = router.RouteOf(f);
    if ((costly && r.first == DecodePath::kCuda && !r.balanced) || (large && r.balanced)) {
      picked.push_back(static_cast<int>(i));
    }
  }
  std::stable_sort(picked.begin(), picked.end(),
                   [&](int a, int b) { return HostCost(facts[static_cast<size_t>(a)]) > HostCost(facts[static_cast<size_t>(b)]); });
  if (static_cast<int>(picked.size()) > max_images) picked.resize(static_cast<size_t>(max_images));
  return picked;
}

ProgressiveRoute ParseProgressiveRoute(const std::string& value, const std::string& what) {
  if (value == "cpu") return ProgressiveRoute::kCpu;
  if (value == "cuda") return ProgressiveRoute::kCuda;
  throw InvalidArgument(what + ": expected cpu or cuda, got \"" + value + "\"");
}

OtherChromaRoute ParseOtherChromaRoute(const std::string& value, const std::string& what) {
  if (value == "engines_own_call") return OtherChromaRoute::kEnginesOwnCall;
  if (value == "cuda") return OtherChromaRoute::kCuda;
  if (value == "cpu") return OtherChromaRoute::kCpu;
  throw InvalidArgument(what + ": expected engines_own_call, cuda or cpu, got \"" + value + "\"");
}

}  // namespace conveyor::ops
