// The decoder's counters (decoder_counters.h): the one field table covers every summed field,
// names each once, and AddCounters sums exactly those; CopyLatest copies the state, not the sums.
#include "operators/decoders/decoder_counters.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace conveyor::ops {
namespace {

GpuDecoderCounters Random(std::mt19937_64& rng) {
  GpuDecoderCounters c;
  for (const DecoderCounterField& f : DecoderCounterFields()) {
    if (f.count != nullptr) c.*f.count = static_cast<int64_t>(rng() % 100000);
    if (f.seconds != nullptr) c.*f.seconds = static_cast<double>(rng() % 100000) / 7.0;
  }
  return c;
}

TEST(DecoderCounters, TheTableNamesEveryFieldOnceWithOneMember) {
  std::set<std::string> names;
  for (const DecoderCounterField& f : DecoderCounterFields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_NE(f.count == nullptr, f.seconds == nullptr) << f.name;
    const std::string name = f.name;
    if (f.seconds != nullptr) EXPECT_EQ(name.substr(name.size() - 8), "_seconds") << name;
  }
  // Every summed member of the struct: 16 counts and 16 times (a new field joins the table).
  EXPECT_EQ(DecoderCounterFields().size(), 32u);
}

TEST(DecoderCounters, AddSumsEveryTableFieldAndNothingElse) {
  std::mt19937_64 rng(std::random_device{}());
  const GpuDecoderCounters a = Random(rng), b = Random(rng);
  GpuDecoderCounters sum = a;
  sum.hw_share = 0.25;
  sum.unavailable_reason = "kept";
  GpuDecoderCounters call = b;
  call.hw_share = 0.75;
  call.unavailable_reason = "not summed";
  AddCounters(sum, call);
  for (const DecoderCounterField& f : DecoderCounterFields()) {
    EXPECT_DOUBLE_EQ(f.Value(sum), f.Value(a) + f.Value(b)) << f.name;
  }
  EXPECT_EQ(sum.hw_share, 0.25);
  EXPECT_EQ(sum.unavailable_reason, "kept");
}

TEST(DecoderCounters, CopyLatestTakesTheStateNotTheSums) {
  std::mt19937_64 rng(std::random_device{}());
  GpuDecoderCounters to = Random(rng);
  const GpuDecoderCounters sums = to;
  GpuDecoderCounters from = Random(rng);
  from.nvjpeg_available = from.hardware_available = true;
  from.hw_share = 0.6, from.hw_rate = 12.5, from.cuda_rate = 3.5;
  from.hw_engines = 7, from.hw_cores_per_engine = 5, from.hw_parts = 2;
  from.unavailable_reason = "why";
  from.nvjpeg2k_available = true;
  from.nvjpeg2k_unavailable_reason = "why not JPEG 2000";
  CopyLatest(to, from);
  EXPECT_TRUE(to.nvjpeg2k_available);
  EXPECT_EQ(to.nvjpeg2k_unavailable_reason, "why not JPEG 2000");
  EXPECT_TRUE(to.nvjpeg_available && to.hardware_available);
  EXPECT_EQ(to.hw_share, 0.6);
  EXPECT_EQ(to.hw_rate, 12.5);
  EXPECT_EQ(to.cuda_rate, 3.5);
  EXPECT_EQ(to.hw_engines, 7);
  EXPECT_EQ(to.hw_parts, 2);
  EXPECT_EQ(to.unavailable_reason, "why");
  for (const DecoderCounterField& f : DecoderCounterFields()) EXPECT_EQ(f.Value(to), f.Value(sums)) << f.name;
}

}  // namespace
}  // namespace conveyor::ops
