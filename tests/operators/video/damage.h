// Damaged copies of test videos: coded data broken under an intact container, which only decoding
// finds (video_errors_test, video_decoder_skip_test).
#pragma once

#include <gtest/gtest.h>

extern "C" {
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <string>
#include <vector>

#include "tests/operators/video/video_fixture.h"

namespace conveyor::testing {

// Overwrites the middle third of packet `packet` (decode order) of the video stream with a fixed
// pattern: damaged coded data under an intact container (libavformat finds the packet's bytes).
inline void DamagePacket(const std::string& path, int packet) {
  AVFormatContext* fmt = nullptr;
  ASSERT_EQ(avformat_open_input(&fmt, path.c_str(), nullptr, nullptr), 0);
  AVPacket* pkt = av_packet_alloc();
  int64_t pos = -1, size = 0;
  for (int n = 0; av_read_frame(fmt, pkt) >= 0; av_packet_unref(pkt)) {
    if (n++ == packet) {
      pos = pkt->pos;
      size = pkt->size;
    }
  }
  av_packet_free(&pkt);
  avformat_close_input(&fmt);
  ASSERT_GT(pos, 0);
  std::vector<uint8_t> bytes = ReadBytes(path);
  for (int64_t i = pos + size / 3; i < pos + 2 * size / 3; ++i) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 37);
  WriteBytes(path, bytes);
}

}  // namespace conveyor::testing
