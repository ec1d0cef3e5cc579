// The progress display's text (the terminal form cannot be seen through a pipe by the CLI tests).
#include "cli/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace conveyor::cli {
namespace {

using ::testing::HasSubstr;

TEST(Progress, TerminalBarWithEpochAndEta) {
  std::ostringstream s;
  // 10 iterations per epoch, 30 in all, batch 8: after 15 iterations in 3 s, epoch 2 is half done.
  const Progress p(s, true, 2.0, 30, 10, 8);
  const std::string line = p.Line(15, 3.0);
  EXPECT_THAT(line, HasSubstr("epoch 2  [############............]  15/30 it  40.0 samples/s  ETA 0:01"));
}

TEST(Progress, PlainLineWithoutReaderCountsToTheEnd) {
  std::ostringstream s;
  const Progress p(s, false, 2.0, 100, 0, 4);
  EXPECT_EQ(p.Line(25, 5.0), "progress: iteration 25/100, epoch 1, 20.0 samples/s, run ETA 15.0 s");
}

TEST(Progress, EpochBoundaryBelongsToTheFinishedEpoch) {
  std::ostringstream s;
  const Progress p(s, false, 2.0, 6, 3, 2);
  EXPECT_THAT(p.Line(3, 3.0), HasSubstr("iteration 3/6, epoch 1, 2.0 samples/s, epoch ETA 0.0 s"));
  EXPECT_THAT(p.Line(4, 4.0), HasSubstr("epoch 2, 2.0 samples/s, epoch ETA 2.0 s"));
}

TEST(Progress, TerminalRedrawsInPlaceAndEndsTheLine) {
  std::ostringstream s;
  Progress p(s, true, 2.0, 2, 0, 1);
  p.Update(1);
  p.Update(2);
  p.Finish();
  EXPECT_EQ(s.str().rfind("\r", 0), 0u);
  EXPECT_THAT(s.str(), HasSubstr("2/2 it"));
  EXPECT_EQ(s.str().back(), '\n');
}

TEST(Progress, Durations) {
  EXPECT_EQ(FormatDuration(0), "0:00");
  EXPECT_EQ(FormatDuration(62.4), "1:02");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
}

}  // namespace
}  // namespace conveyor::cli
