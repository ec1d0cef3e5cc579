// The frame code the test videos carry (tools/make_test_videos/frame_code.h): every number reads
// back from the frame it was drawn into, and a frame it was not drawn into reads as -1, never as
// another number.
#include <gtest/gtest.h>

#include <vector>

#include "tools/make_test_videos/frame_code.h"

namespace conveyor::testvideos {
namespace {

TEST(FrameCode, EveryNumberReadsBack) {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{64, 64}, {128, 96}, {100, 70}, {1280, 720}}) {
    std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
    for (int n : {0, 1, 2, 255, 256, 1000, 4095, 12345, 65534, 65535}) {
      DrawTestFrame(n, w, h, rgb.data(), w * 3);
      EXPECT_EQ(ReadFrameNumber(rgb.data(), w, h, w * 3), n) << w << "x" << h;
    }
  }
}

TEST(FrameCode, SurvivesNoiseAndRefusesWhatIsNotACode) {
  const int w = 64, h = 64;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  DrawTestFrame(777, w, h, rgb.data(), w * 3);
  std::vector<uint8_t> noisy = rgb;
  for (size_t i = 0; i < noisy.size(); ++i) {
    const int v = noisy[i] + static_cast<int>((i * 2654435761u >> 7) % 61) - 30;  // +-30 everywhere
    noisy[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  EXPECT_EQ(ReadFrameNumber(noisy.data(), w, h, w * 3), 777);
  std::vector<uint8_t> grey(rgb.size(), 128);
  EXPECT_EQ(ReadFrameNumber(grey.data(), w, h, w * 3), -1);
  // One bit flipped without its inverse: caught by the inverted copy.
  std::vector<uint8_t> flipped = rgb;
  for (int y = 0; y < h / 8; ++y) {
    for (int x = 0; x < w / 8; ++x) {
      for (int c = 0; c < 3; ++c) flipped[static_cast<size_t>(y * w + x) * 3 + c] ^= 0xFF;
    }
  }
  EXPECT_EQ(ReadFrameNumber(flipped.data(), w, h, w * 3), -1);
}

}  // namespace
}  // namespace conveyor::testvideos
