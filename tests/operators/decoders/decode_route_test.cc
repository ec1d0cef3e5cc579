// The GPU decoder's routing policy (decode_route.h), GPU-free: every kind of image against every
// configuration of available paths and options, and the refusal chains.
#include "operators/decoders/decode_route.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/error.h"

namespace conveyor::ops {
namespace {

RouteFacts Jpeg(ChromaSubsampling s, bool progressive = false, int64_t pixels = 500 * 375) {
  RouteFacts f;
  f.jpeg = true;
  f.subsampling = s;
  f.progressive = progressive;
  f.pixels = pixels;
  return f;
}

RouterConfig Full() {
  RouterConfig c;
  c.nvjpeg = true;
  c.engines = true;
  return c;
}

TEST(DecodeRouter, BaselineFourTwoZeroIsBalancedOnTheEngines) {
  const Route r = DecodeRouter(Full()).RouteOf(Jpeg(ChromaSubsampling::k420));
  EXPECT_EQ(r.first, DecodePath::kEngines);
  EXPECT_EQ(r.group, EngineGroup::k420);
  EXPECT_TRUE(r.balanced);
}

TEST(DecodeRouter, OtherChromaGetsEnginesCallsOfItsOwnTheCudaBackendOrTheCpu) {
  for (ChromaSubsampling s : {ChromaSubsampling::k444, ChromaSubsampling::k422, ChromaSubsampling::kGray,
                              ChromaSubsampling::k440, ChromaSubsampling::k411, ChromaSubsampling::kOther}) {
    RouterConfig c = Full();
    Route r = DecodeRouter(c).RouteOf(Jpeg(s));  // the default: the CUDA backend
    EXPECT_EQ(r.first, DecodePath::kCuda) << ChromaSubsamplingName(s);
    EXPECT_FALSE(r.balanced);
    c.other_chroma = OtherChromaRoute::kEnginesOwnCall;
    r = DecodeRouter(c).RouteOf(Jpeg(s));
    EXPECT_EQ(r.first, DecodePath::kEngines) << ChromaSubsamplingName(s);
    EXPECT_EQ(r.group, EngineGroup::kOther) << ChromaSubsamplingName(s);
    EXPECT_FALSE(r.balanced);
    c.other_chroma = OtherChromaRoute::kCpu;
    r = DecodeRouter(c).RouteOf(Jpeg(s));
    EXPECT_EQ(r.first, DecodePath::kCpu) << ChromaSubsamplingName(s);
    EXPECT_FALSE(r.balanced);
  }
  // 4:2:0 stays balanced whatever other_chroma says.
  RouterConfig c = Full();
  c.other_chroma = OtherChromaRoute::kCpu;
  EXPECT_TRUE(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420)).balanced);
}

TEST(DecodeRouter, ProgressiveGoesWhereTheOptionSaysNeverToTheEngines) {
  for (ChromaSubsampling s : {ChromaSubsampling::k420, ChromaSubsampling::k444, ChromaSubsampling::kGray}) {
    RouterConfig c = Full();
    EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true)).first, DecodePath::kCuda);  // the default
    c.progressive = ProgressiveRoute::kCpu;
    EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true)).first, DecodePath::kCpu);
    c.progressive = ProgressiveRoute::kCuda;
    c.engines = false;  // the same without engines
    EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true)).first, DecodePath::kCuda);
    c.progressive = ProgressiveRoute::kCpu;
    EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true)).first, DecodePath::kCpu);
  }
}

// progressive_cpu_pixels: small progressive images to the CPU path, larger ones where the option
// says; baseline images never move.
TEST(DecodeRouter, SmallProgressiveImagesGoToTheCpuBelowTheThreshold) {
  RouterConfig c = Full();
  c.progressive_cpu_pixels = 300'000;
  const DecodeRouter r(c);
  EXPECT_EQ(r.RouteOf(Jpeg(ChromaSubsampling::k420, true, 299'999)).first, DecodePath::kCpu);
  EXPECT_EQ(r.RouteOf(Jpeg(ChromaSubsampling::k420, true, 300'000)).first, DecodePath::kCpu);
  EXPECT_EQ(r.RouteOf(Jpeg(ChromaSubsampling::k444, true, 300'001)).first, DecodePath::kCuda);
  EXPECT_EQ(r.RouteOf(Jpeg(ChromaSubsampling::k420, false, 100'000)).first, DecodePath::kEngines);
  c.progressive_cpu_pixels = 0;  // the default: none
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, true, 1)).first, DecodePath::kCuda);
}

TEST(DecodeRouter, LargeBaselineImagesGetEnginesCallsOfTheirOwn) {
  RouterConfig c = Full();
  for (ChromaSubsampling s : {ChromaSubsampling::k420, ChromaSubsampling::k444, ChromaSubsampling::kGray}) {
    Route r = DecodeRouter(c).RouteOf(Jpeg(s, false, c.large_pixels + 1));
    EXPECT_EQ(r.first, DecodePath::kEngines);
    EXPECT_EQ(r.group, EngineGroup::kLarge);
    EXPECT_FALSE(r.balanced);
    r = DecodeRouter(c).RouteOf(Jpeg(s, false, c.large_pixels));  // at the threshold: not large
    EXPECT_NE(r.group, EngineGroup::kLarge);
    // Progressive large images follow the progressive route.
    EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true, c.large_pixels + 1)).first, DecodePath::kCuda);
  }
  c.engines = false;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, false, c.large_pixels + 1)).first,
            DecodePath::kCuda);
}

// other_engines_pixels: baseline images other than 4:2:0 above it go to the engines' large group
// whatever other_chroma says; at or below it, 4:2:0 and progressive images of any size route as before.
TEST(DecodeRouter, LargeOtherChromaGoesToTheEngines) {
  RouterConfig c = Full();
  c.large_pixels = 100'000'000;  // GpuDecoder's default: off
  c.other_engines_pixels = 4'000'000;
  for (OtherChromaRoute oc : {OtherChromaRoute::kCuda, OtherChromaRoute::kCpu, OtherChromaRoute::kEnginesOwnCall}) {
    c.other_chroma = oc;
    for (ChromaSubsampling s : {ChromaSubsampling::k444, ChromaSubsampling::k422, ChromaSubsampling::kGray}) {
      Route r = DecodeRouter(c).RouteOf(Jpeg(s, false, 4'000'001));
      EXPECT_EQ(r.first, DecodePath::kEngines);
      EXPECT_EQ(r.group, EngineGroup::kLarge);
      EXPECT_FALSE(r.balanced);
      r = DecodeRouter(c).RouteOf(Jpeg(s, false, 4'000'000));  // at the threshold: other_chroma's route
      EXPECT_EQ(r.group, EngineGroup::kOther);
      EXPECT_EQ(r.first, oc == OtherChromaRoute::kCuda  ? DecodePath::kCuda
                         : oc == OtherChromaRoute::kCpu ? DecodePath::kCpu
                                                        : DecodePath::kEngines);
      EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(s, true, 9'000'000)).first, DecodePath::kCuda);  // progressive
    }
  }
  Route r = DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, false, 9'000'000));  // 4:2:0: balanced
  EXPECT_EQ(r.group, EngineGroup::k420);
  EXPECT_TRUE(r.balanced);
  c.engines = false;  // no engines: the CUDA backend
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k444, false, 9'000'000)).first, DecodePath::kCuda);
}

// engines_only_pixels: baseline 4:2:0 images above it stay in the engines' 4:2:0 call, unbalanced;
// at or below it, and every other kind, route as before; without engines, the CUDA backend.
TEST(DecodeRouter, FourTwoZeroAboveTheEnginesOnlySizeIsNotBalanced) {
  RouterConfig c = Full();
  c.large_pixels = 100'000'000;
  c.engines_only_pixels = 2'000'000;
  Route r = DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, false, 2'000'001));
  EXPECT_EQ(r.first, DecodePath::kEngines);
  EXPECT_EQ(r.group, EngineGroup::k420);
  EXPECT_FALSE(r.balanced);
  EXPECT_TRUE(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, false, 2'000'000)).balanced);
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k444, false, 3'000'000)).first, DecodePath::kCuda);
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, true, 3'000'000)).first, DecodePath::kCuda);
  // Off by default: every size balanced.
  EXPECT_TRUE(DecodeRouter(Full()).RouteOf(Jpeg(ChromaSubsampling::k420, false, 3'000'000)).balanced);
  c.engines = false;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, false, 3'000'000)).first, DecodePath::kCuda);
}

TEST(DecodeRouter, WhatNoGpuPathTakesGoesToTheCpu) {
  const DecodeRouter router(Full());
  RouteFacts png;  // not a JPEG nvJPEG may take (PNG, arithmetic-coded)
  EXPECT_EQ(router.RouteOf(png).first, DecodePath::kCpu);
  RouteFacts empty = Jpeg(ChromaSubsampling::k420);
  empty.empty = true;
  EXPECT_EQ(router.RouteOf(empty).first, DecodePath::kCpu);
  RouterConfig no_nvjpeg;
  EXPECT_EQ(DecodeRouter(no_nvjpeg).RouteOf(Jpeg(ChromaSubsampling::k420)).first, DecodePath::kCpu);
}

TEST(DecodeRouter, WithoutEnginesTheCudaBackendTakesBaseline) {
  RouterConfig c = Full();
  c.engines = false;
  for (ChromaSubsampling s : {ChromaSubsampling::k420, ChromaSubsampling::k444}) {
    const Route r = DecodeRouter(c).RouteOf(Jpeg(s));
    EXPECT_EQ(r.first, DecodePath::kCuda);
    EXPECT_FALSE(r.balanced);
  }
}

TEST(DecodeRouter, ForcedPathsAndTheirChains) {
  RouterConfig c = Full();
  c.paths = DecodePaths::kCudaOnly;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420, true)).first, DecodePath::kCuda);
  EXPECT_EQ(DecodeRouter(c).Next(DecodePath::kCuda), DecodePath::kCpu);
  c.paths = DecodePaths::kHardwareOnly;  // progressive too: the engines refuse it, the CPU takes it
  const Route r = DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k444, true));
  EXPECT_EQ(r.first, DecodePath::kEngines);
  EXPECT_EQ(r.group, EngineGroup::kOther);
  EXPECT_EQ(DecodeRouter(c).Next(DecodePath::kEngines), DecodePath::kCpu);
  c.engines = false;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420)).first, DecodePath::kCpu);
  c.paths = DecodePaths::kCpuOnly;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420)).first, DecodePath::kCpu);
  EXPECT_EQ(DecodeRouter(Full()).Next(DecodePath::kEngines), DecodePath::kCuda);
  EXPECT_EQ(DecodeRouter(Full()).Next(DecodePath::kCuda), DecodePath::kCpu);
}

RouteFacts Jpeg2000(int64_t pixels = 640 * 480) {
  RouteFacts f;
  f.jpeg2000 = true;
  f.pixels = pixels;
  return f;
}

// JPEG 2000 goes to nvJPEG2000 wherever it is loaded, whatever nvJPEG and the engines are, under
// every DecodePaths but kCpuOnly (the JPEG-forcing switches do not concern it); its refusals go to
// the CPU.
TEST(DecodeRouter, Jpeg2000GoesToNvjpeg2000WhereLoadedElseTheCpu) {
  for (const bool nvjpeg : {false, true}) {
    for (const DecodePaths paths : {DecodePaths::kAuto, DecodePaths::kCudaOnly, DecodePaths::kHardwareOnly}) {
      RouterConfig c = nvjpeg ? Full() : RouterConfig{};
      c.paths = paths;
      c.nvjpeg2k = true;
      const Route r = DecodeRouter(c).RouteOf(Jpeg2000());
      EXPECT_EQ(r.first, DecodePath::kJpeg2000) << nvjpeg << " " << static_cast<int>(paths);
      EXPECT_FALSE(r.balanced);
      EXPECT_EQ(DecodeRouter(c).Next(DecodePath::kJpeg2000), DecodePath::kCpu);
      c.nvjpeg2k = false;  // not loaded: the CPU path
      EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg2000()).first, DecodePath::kCpu);
    }
  }
  RouterConfig c = Full();
  c.nvjpeg2k = true;
  c.paths = DecodePaths::kCpuOnly;
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg2000()).first, DecodePath::kCpu);
  c.paths = DecodePaths::kAuto;
  RouteFacts empty = Jpeg2000();
  empty.empty = true;  // a zero-sized window: nothing to decode
  EXPECT_EQ(DecodeRouter(c).RouteOf(empty).first, DecodePath::kCpu);
  // JPEGs keep their routes beside it.
  EXPECT_EQ(DecodeRouter(c).RouteOf(Jpeg(ChromaSubsampling::k420)).first, DecodePath::kEngines);
  EXPECT_STREQ(DecodePathName(DecodePath::kJpeg2000), "nvJPEG2000");
}

// The look-ahead's picks: images the CUDA backend takes alone, at least min_cost (pixels, x3
// progressive), costliest first, at most max_images; balanced 4:2:0 only from balanced_min_pixels
// on; never CPU, PNG or empty ones.
TEST(PickAhead, TheCostliestCudaBackendImagesAtMostMaxImages) {
  std::mt19937_64 rng(std::random_device{}());
  for (int round = 0; round < 50; ++round) {
    const DecodeRouter router(Full());
    std::vector<RouteFacts> facts;
    const ChromaSubsampling kinds[] = {ChromaSubsampling::k420, ChromaSubsampling::k422, ChromaSubsampling::k444,
                                       ChromaSubsampling::kGray};
    for (int i = 0; i < 64; ++i) {
      RouteFacts f = Jpeg(kinds[rng() % 4], rng() % 4 == 0, 1000 + static_cast<int64_t>(rng() % 12'000'000));
      if (rng() % 10 == 0) f.jpeg = false;  // PNG: the CPU path
      if (rng() % 20 == 0) f.empty = true;
      facts.push_back(f);
    }
    const int64_t min_cost = 1 + static_cast<int64_t>(rng() % 10'000'000);
    const int max_images = 1 + static_cast<int>(rng() % 8);
    // Half the rounds: balanced 4:2:0 photos from a random size on are candidates too.
    const int64_t balanced_min = rng() % 2 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 10'000'000);
    const std::vector<int> picked = PickAhead(router, facts, min_cost, max_images, balanced_min);
    // The reference: every eligible image, sorted by cost (index breaks ties), cut at max_images.
    std::vector<int> eligible;
    for (int i = 0; i < 64; ++i) {
      const RouteFacts& f = facts[static_cast<size_t>(i)];
      // Progressive: the CUDA backend; baseline above large_pixels: the engines' large call;
      // other baseline 4:2:0: balanced; the rest: the CUDA backend.
      const bool large = !f.progressive && f.pixels > router.config().large_pixels;
      const bool cuda_alone =
          f.jpeg && !f.empty && !large && (f.progressive || f.subsampling != ChromaSubsampling::k420);
      const bool balanced = f.jpeg && !f.empty && !large && !f.progressive && f.subsampling == ChromaSubsampling::k420;
      const int64_t cost = f.progressive ? 3 * f.pixels : f.pixels;
      if ((cuda_alone && cost >= min_cost) || (balanced && balanced_min > 0 && f.pixels >= balanced_min)) {
        eligible.push_back(i);
      }
    }
    std::stable_sort(eligible.begin(), eligible.end(), [&](int a, int b) {
      return HostCost(facts[static_cast<size_t>(a)]) > HostCost(facts[static_cast<size_t>(b)]);
    });
    if (static_cast<int>(eligible.size()) > max_images) eligible.resize(static_cast<size_t>(max_images));
    EXPECT_EQ(picked, eligible) << "round " << round << ", min_cost " << min_cost << ", max " << max_images
                                << ", balanced from " << balanced_min;
  }
}

TEST(PickAhead, NothingWhenOffOrWhereTheCpuTakesTheImages) {
  const std::vector<RouteFacts> facts = {Jpeg(ChromaSubsampling::k444, true, 9'000'000),
                                         Jpeg(ChromaSubsampling::k420, false, 9'000'000)};
  EXPECT_TRUE(PickAhead(DecodeRouter(Full()), facts, 0, 4).empty()) << "min_cost 0: off";
  EXPECT_TRUE(PickAhead(DecodeRouter(Full()), facts, 1, 0).empty());
  EXPECT_EQ(PickAhead(DecodeRouter(Full()), facts, 1, 4), std::vector<int>{0}) << "balanced 4:2:0 is not picked";
  RouterConfig no_large = Full();  // as GpuDecoder routes: no engines' large group, 4:2:0 of every size balanced
  no_large.large_pixels = 1'000'000'000;
  EXPECT_EQ(PickAhead(DecodeRouter(no_large), facts, 1, 4), std::vector<int>{0}) << "balanced 4:2:0 is not picked";
  EXPECT_EQ(PickAhead(DecodeRouter(no_large), facts, 1, 4, 9'000'001), std::vector<int>{0}) << "below the size";
  EXPECT_EQ(PickAhead(DecodeRouter(no_large), facts, 1, 4, 9'000'000), (std::vector<int>{0, 1}))
      << "from the size on, balanced 4:2:0 too (cost 27 MP before 9 MP)";
  EXPECT_EQ(PickAhead(DecodeRouter(Full()), facts, 1, 4, 1), std::vector<int>{0})
      << "the engines' large group is not balanced: not picked";
  EXPECT_TRUE(PickAhead(DecodeRouter(no_large), facts, 0, 4, 1).empty()) << "min_cost 0: off, whatever else";
  RouterConfig cpu = Full();
  cpu.progressive = ProgressiveRoute::kCpu;
  EXPECT_TRUE(PickAhead(DecodeRouter(cpu), facts, 1, 4).empty()) << "progressive on the CPU path";
  RouterConfig no_engines = Full();
  no_engines.engines = false;
  EXPECT_EQ(PickAhead(DecodeRouter(no_engines), facts, 1, 4), (std::vector<int>{0, 1}))
      << "without engines 4:2:0 is the CUDA backend's alone";
}

TEST(DecodeRouter, OptionValuesAreParsedOrRefusedByName) {
  EXPECT_EQ(ParseProgressiveRoute("cpu", "x"), ProgressiveRoute::kCpu);
  EXPECT_EQ(ParseProgressiveRoute("cuda", "x"), ProgressiveRoute::kCuda);
  EXPECT_EQ(ParseOtherChromaRoute("engines_own_call", "x"), OtherChromaRoute::kEnginesOwnCall);
  EXPECT_EQ(ParseOtherChromaRoute("cuda", "x"), OtherChromaRoute::kCuda);
  EXPECT_EQ(ParseOtherChromaRoute("cpu", "x"), OtherChromaRoute::kCpu);
  try {
    ParseProgressiveRoute("gpu", "op \"dec\": argument \"progressive_decoder\"");
    FAIL() << "accepted gpu";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("op \"dec\": argument \"progressive_decoder\": expected cpu or cuda, got \"gpu\""));
  }
  EXPECT_THROW(ParseOtherChromaRoute("engines", "x"), InvalidArgument);
}

}  // namespace
}  // namespace conveyor::ops
