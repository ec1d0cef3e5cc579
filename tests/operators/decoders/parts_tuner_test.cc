// The engines' handle-count tuner (parts_tuner.h), GPU-free: its schedule call by call, the faster
// choice found under noise and varying batch costs, settle calls left out, a new probe after the
// hold that follows a change in the data.
#include "operators/decoders/parts_tuner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace conveyor::ops {
namespace {

TEST(PartsTuner, UntunedOrOneHandleAlwaysUsesEveryHandle) {
  for (const auto& [max_parts, tuned] : {std::pair{2, false}, std::pair{3, false}, std::pair{1, true}}) {
    PartsTuner tuner(max_parts, tuned);
    EXPECT_FALSE(tuner.tuned());
    for (int call = 0; call < 1000; ++call) {
      ASSERT_EQ(tuner.parts(), max_parts);
      ASSERT_EQ(tuner.choice(), 0);
      tuner.Record(0.01 * (1 + call % 7), 1e6);
    }
    EXPECT_EQ(tuner.probes(), 0);
  }
}

// The choice of each call: warm-up on every handle, then windows alternating every handle / one,
// then the winner for `hold` calls, then the next probe.
TEST(PartsTuner, FollowsItsScheduleCallByCall) {
  const PartsTuner::Schedule schedule{.warmup = 3, .settle = 1, .measure = 2, .rounds = 2, .hold = 5};
  PartsTuner tuner(2, true, schedule);
  std::string seen;
  for (int call = 0; call < 3 + 12 + 5 + 12; ++call) {
    seen += std::to_string(tuner.parts());
    // One handle is faster: 1 s per unit of cost against 2.
    tuner.Record(tuner.parts() == 1 ? 1.0 : 2.0, 1.0);
  }
  EXPECT_EQ(seen,
            "222"            // warm-up
            "222111222111"   // probe: 2 rounds of 3-call windows
            "11111"          // hold: one handle won
            "222111222111");  // the next probe
  EXPECT_EQ(tuner.probes(), 2);
  EXPECT_DOUBLE_EQ(tuner.measured(0), 2.0);
  EXPECT_DOUBLE_EQ(tuner.measured(1), 1.0);
}

// Per-call noise of ±10% and batches whose cost varies 10x: a 20% difference between the choices
// is found either way round, every time (the seconds follow the cost, so the mean per unit of cost
// cannot flip a 20% gap).
TEST(PartsTuner, FindsTheFasterChoiceUnderNoise) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> noise(0.9, 1.1), cost(1e6, 1e7);
  for (int trial = 0; trial < 200; ++trial) {
    const bool one_faster = trial % 2 == 0;
    const double per_cost[3] = {0, one_faster ? 0.8 : 1.0, one_faster ? 1.0 : 0.8};  // by parts: 1, 2
    PartsTuner tuner(2, true);
    while (tuner.probes() == 0) {
      const double c = cost(rng);
      tuner.Record(c * per_cost[tuner.parts()] * 1e-9 * noise(rng), c);
    }
    ASSERT_EQ(tuner.parts(), one_faster ? 1 : 2) << "trial " << trial;
    ASSERT_EQ(tuner.choice(), one_faster ? 1 : 0);
  }
}

// The calls right after a switch (the balance re-settling) are not measured: huge times there do
// not decide.
TEST(PartsTuner, SettleCallsAreNotMeasured) {
  const PartsTuner::Schedule schedule{.warmup = 0, .settle = 2, .measure = 4, .rounds = 3, .hold = 100};
  PartsTuner tuner(2, true, schedule);
  int in_window = 0, last = -1;
  while (tuner.probes() == 0) {
    if (tuner.parts() != last) in_window = 0;
    last = tuner.parts();
    // One handle is faster except in its windows' settle calls, which are 100x slower.
    const double t = tuner.parts() == 1 ? (in_window < 2 ? 100.0 : 1.0) : 2.0;
    tuner.Record(t, 1.0);
    ++in_window;
  }
  EXPECT_EQ(tuner.parts(), 1);
}

// Calls without cost (no images) or time are skipped; a probe with no figure for a choice keeps
// what held.
TEST(PartsTuner, CallsWithoutCostAreSkipped) {
  const PartsTuner::Schedule schedule{.warmup = 0, .settle = 0, .measure = 2, .rounds = 1, .hold = 10};
  PartsTuner tuner(3, true, schedule);
  tuner.Record(5.0, 1.0);  // 3 handles: 5 s per unit
  tuner.Record(5.0, 0.0);  // skipped
  tuner.Record(1.0, 0.0);  // one handle, both calls skipped
  tuner.Record(0.0, 1.0);
  EXPECT_EQ(tuner.probes(), 1);
  EXPECT_EQ(tuner.parts(), 3);
  EXPECT_DOUBLE_EQ(tuner.measured(0), 5.0);
  EXPECT_DOUBLE_EQ(tuner.measured(1), 0.0);
}

// The data changes after the first probe: the next probe, after the hold, follows it.
TEST(PartsTuner, ProbesAgainAfterTheHold) {
  const PartsTuner::Schedule schedule{.warmup = 2, .settle = 1, .measure = 3, .rounds = 2, .hold = 50};
  PartsTuner tuner(2, true, schedule);
  bool one_faster = true;
  std::vector<int> choices;
  for (int call = 0; call < 400; ++call) {
    const int probes = tuner.probes();
    tuner.Record(tuner.parts() == 1 ? (one_faster ? 1.0 : 3.0) : 2.0, 1.0);
    if (tuner.probes() != probes) {
      choices.push_back(tuner.parts());
      one_faster = !one_faster;
    }
  }
  ASSERT_GE(choices.size(), 4u);
  for (size_t k = 0; k < choices.size(); ++k) EXPECT_EQ(choices[k], k % 2 == 0 ? 1 : 2) << "probe " << k;
}

// share_tuned: "engines only" is a choice beside each handle count; windows cycle through all four.
TEST(PartsTuner, ShareTunedCyclesFourChoices) {
  const PartsTuner::Schedule schedule{.warmup = 2, .settle = 0, .measure = 2, .rounds = 1, .hold = 3};
  PartsTuner tuner(2, true, schedule, /*share_tuned=*/true, /*balanced_margin=*/0.03);
  ASSERT_TRUE(tuner.tuned());
  ASSERT_EQ(tuner.choices(), 4);
  std::string seen;
  for (int call = 0; call < 2 + 8 + 2; ++call) {
    seen += std::to_string(tuner.parts()) + (tuner.engines_only() ? "e" : "b") + " ";
    // One handle, engines only, is the fastest: 1 s per unit against 2.
    tuner.Record(tuner.parts() == 1 && tuner.engines_only() ? 1.0 : 2.0, 1.0);
  }
  EXPECT_EQ(seen,
            "2b 2b "                        // warm-up: most handles, balanced
            "2b 2b 2e 2e 1b 1b 1e 1e "      // probe: every choice, one window each
            "1e 1e ");                      // hold (3 calls): one handle, engines only
  EXPECT_EQ(tuner.probes(), 1);
  EXPECT_EQ(tuner.choice(), 3);
  EXPECT_DOUBLE_EQ(tuner.measured(3), 1.0);
  EXPECT_DOUBLE_EQ(tuner.measured(0), 2.0);
}

// A balanced choice costs host cores: it is kept only when it beats "engines only" by the margin.
// Balanced 2% faster: engines only wins; 5% faster: balanced wins; with margin 0, 2% is enough.
TEST(PartsTuner, BalancedMustWinByTheMargin) {
  const PartsTuner::Schedule schedule{.warmup = 0, .settle = 0, .measure = 3, .rounds = 2, .hold = 100};
  for (const auto& [balanced, margin, expect_engines_only] :
       {std::tuple{0.98, 0.03, true}, std::tuple{0.95, 0.03, false}, std::tuple{0.98, 0.0, false},
        std::tuple{1.10, 0.03, true}}) {
    PartsTuner tuner(1, true, schedule, true, margin);
    ASSERT_EQ(tuner.choices(), 2);  // one handle: balanced, engines only
    while (tuner.probes() == 0) tuner.Record(tuner.engines_only() ? 1.0 : balanced, 1.0);
    EXPECT_EQ(tuner.engines_only(), expect_engines_only) << "balanced at " << balanced << ", margin " << margin;
    EXPECT_EQ(tuner.parts(), 1);
  }
}

// Without share tuning nothing is ever engines only, whatever the times say.
TEST(PartsTuner, UntunedShareIsNeverEnginesOnly) {
  PartsTuner tuner(2, true);
  for (int call = 0; call < 2000; ++call) {
    ASSERT_FALSE(tuner.engines_only());
    tuner.Record(1.0 + call % 3, 1.0);
  }
  EXPECT_EQ(tuner.choices(), 2);
}

TEST(PartsTuner, CostCountsProgressiveThreeTimes) {
  EXPECT_DOUBLE_EQ(TunerCost(1000, false), 1000.0);
  EXPECT_DOUBLE_EQ(TunerCost(1000, true), 3000.0);
}

}  // namespace
}  // namespace conveyor::ops
