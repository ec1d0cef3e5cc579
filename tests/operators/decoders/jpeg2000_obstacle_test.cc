// What keeps a JPEG 2000 file off nvJPEG2000 (jpeg2000_obstacle.h), GPU-free: files OpenJPEG wrote
// pass; the same files with a palette, a component mapping, a channel definition that is not the
// colour channels in order, an image offset, or cut short are held back, each naming its reason.
#include "operators/decoders/jpeg2000_obstacle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tools/testimages/format_images.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> Encode(int channels, bool jp2, int tile = 0) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> side(9, 40), sample(0, 255);
  const int h = side(rng), w = side(rng);
  std::vector<uint16_t> samples(static_cast<size_t>(h * w * channels));
  for (uint16_t& v : samples) v = static_cast<uint16_t>(sample(rng));
  testimages::Jpeg2000Options o;
  o.jp2 = jp2;
  o.tile = tile;
  o.resolutions = 2;
  return testimages::EncodeJpeg2000(samples, h, w, channels, 8, o);
}

uint32_t U32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }
void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// Offset of the top-level box `type` (8-byte headers, as OpenJPEG writes them).
size_t FindBox(const std::vector<uint8_t>& f, const char* type) {
  for (size_t pos = 0; pos + 8 <= f.size(); pos += U32(&f[pos])) {
    if (std::memcmp(&f[pos + 4], type, 4) == 0) return pos;
    if (U32(&f[pos]) < 8) break;
  }
  ADD_FAILURE() << "no " << type << " box";
  return 0;
}

// `file` with a box of `type` and `payload` appended to its JP2 header superbox.
std::vector<uint8_t> WithHeaderBox(std::vector<uint8_t> file, const char* type, const std::vector<uint8_t>& payload) {
  const size_t jp2h = FindBox(file, "jp2h");
  const uint32_t length = U32(&file[jp2h]);
  std::vector<uint8_t> box(8);
  PutU32(box.data(), static_cast<uint32_t>(8 + payload.size()));
  std::memcpy(&box[4], type, 4);
  box.insert(box.end(), payload.begin(), payload.end());
  file.insert(file.begin() + static_cast<std::ptrdiff_t>(jp2h + length), box.begin(), box.end());
  PutU32(&file[jp2h], length + static_cast<uint32_t>(box.size()));
  return file;
}

// A cdef payload: (channel, type, association) per entry, 16-bit big-endian.
std::vector<uint8_t> Cdef(const std::vector<std::array<uint16_t, 3>>& entries) {
  std::vector<uint8_t> p = {0, static_cast<uint8_t>(entries.size())};
  for (const auto& e : entries) {
    for (uint16_t v : e) {
      p.push_back(static_cast<uint8_t>(v >> 8));
      p.push_back(static_cast<uint8_t>(v));
    }
  }
  return p;
}

std::string Obstacle(const std::vector<uint8_t>& f) { return Jpeg2000GpuObstacle(f.data(), f.size()); }

TEST(Jpeg2000GpuObstacle, FilesOpenJpegWroteHaveNone) {
  for (const bool jp2 : {false, true}) {
    for (const int channels : {1, 3}) {
      EXPECT_EQ(Obstacle(Encode(channels, jp2)), "") << jp2 << " " << channels;
      EXPECT_EQ(Obstacle(Encode(channels, jp2, 16)), "") << jp2 << " " << channels << " tiled";
    }
  }
}

TEST(Jpeg2000GpuObstacle, PalettesAndComponentMappingsStayOnTheCpu) {
  const std::vector<uint8_t> rgb = Encode(3, true);
  EXPECT_THAT(Obstacle(WithHeaderBox(rgb, "pclr", {0, 2, 3, 7, 7, 7, 1, 2, 3, 4, 5, 6})),
              HasSubstr("a JP2 palette (pclr box)"));
  EXPECT_THAT(Obstacle(WithHeaderBox(rgb, "cmap", {0, 0, 1, 0})), HasSubstr("a JP2 component mapping (cmap box)"));
}

TEST(Jpeg2000GpuObstacle, OnlyAChannelDefinitionOfColourChannelsInOrderPasses) {
  const std::vector<uint8_t> rgb = Encode(3, true);
  EXPECT_EQ(Obstacle(WithHeaderBox(rgb, "cdef", Cdef({{0, 0, 1}, {1, 0, 2}, {2, 0, 3}}))), "");
  EXPECT_THAT(Obstacle(WithHeaderBox(rgb, "cdef", Cdef({{0, 0, 3}, {1, 0, 2}, {2, 0, 1}}))),
              HasSubstr("other than colour channels in order: channel 0 type 0 association 3"));
  EXPECT_THAT(Obstacle(WithHeaderBox(rgb, "cdef", Cdef({{0, 0, 1}, {1, 0, 2}, {2, 1, 0}}))),
              HasSubstr("channel 2 type 1 association 0"));  // an opacity channel
  std::vector<uint8_t> cut = Cdef({{0, 0, 1}, {1, 0, 2}, {2, 0, 3}});
  cut.resize(cut.size() - 4);  // declares 3 entries, holds 2 and a half
  EXPECT_THAT(Obstacle(WithHeaderBox(rgb, "cdef", cut)), HasSubstr("channel definition (cdef box) cut off"));
}

TEST(Jpeg2000GpuObstacle, AnImageOffsetStaysOnTheCpu) {
  for (const bool jp2 : {false, true}) {
    std::vector<uint8_t> f = Encode(3, jp2);
    const size_t siz = jp2 ? FindBox(f, "jp2c") + 8 : 0;  // the codestream: SOC, SIZ
    ASSERT_EQ(f[siz], 0xFF);
    ASSERT_EQ(f[siz + 3], 0x51);
    PutU32(&f[siz + 16], 5);   // XOsiz
    PutU32(&f[siz + 20], 12);  // YOsiz
    EXPECT_THAT(Obstacle(f), HasSubstr("an image offset (5, 12) in SIZ")) << jp2;
  }
}

TEST(Jpeg2000GpuObstacle, ACutFileStaysOnTheCpu) {
  const std::vector<uint8_t> jp2 = Encode(3, true);
  const size_t jp2h = FindBox(jp2, "jp2h");
  std::vector<uint8_t> cut(jp2.begin(), jp2.begin() + static_cast<std::ptrdiff_t>(jp2h + 12));
  EXPECT_THAT(Obstacle(cut), HasSubstr("a JP2 box cut off"));
  std::vector<uint8_t> no_codestream(jp2.begin(), jp2.begin() + static_cast<std::ptrdiff_t>(FindBox(jp2, "jp2c")));
  EXPECT_THAT(Obstacle(no_codestream), HasSubstr("no JP2 codestream box (jp2c)"));
  const std::vector<uint8_t> j2k = Encode(1, false);
  EXPECT_THAT(Obstacle(std::vector<uint8_t>(j2k.begin(), j2k.begin() + 20)),
              HasSubstr("no SIZ marker segment at the codestream's start"));
}

}  // namespace
}  // namespace conveyor::ops
