// CRC32C: published vectors (RFC 3720 B.4, the "123456789" check value), the portable and SSE4.2
// implementations agreeing on every length and alignment, continuation, and TFRecord's masking.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "operators/readers/tfrecord/crc32c.h"

namespace conveyor::ops {
namespace {

struct Vector {
  std::vector<uint8_t> data;
  uint32_t crc;
};

std::vector<Vector> KnownVectors() {
  std::vector<Vector> v;
  const std::string check = "123456789";
  v.push_back({{check.begin(), check.end()}, 0xE3069283u});
  v.push_back({std::vector<uint8_t>(32, 0x00), 0x8A9136AAu});
  v.push_back({std::vector<uint8_t>(32, 0xFF), 0x62A8AB43u});
  std::vector<uint8_t> up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
    down[static_cast<size_t>(i)] = static_cast<uint8_t>(31 - i);
  }
  v.push_back({up, 0x46DD794Eu});
  v.push_back({down, 0x113FDB5Cu});
  // RFC 3720 B.4: an iSCSI read command PDU.
  v.push_back({{0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
                0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
               0xD9963A56u});
  v.push_back({{}, 0x00000000u});
  return v;
}

TEST(Crc32c, KnownVectorsOnEveryImplementation) {
  for (const Vector& v : KnownVectors()) {
    EXPECT_EQ(Crc32c(v.data.data(), v.data.size()), v.crc) << v.data.size() << " bytes";
    EXPECT_EQ(Crc32cPortable(v.data.data(), v.data.size()), v.crc) << v.data.size() << " bytes";
    if (Crc32cHasHardware()) EXPECT_EQ(Crc32cHardware(v.data.data(), v.data.size()), v.crc);
  }
}

// A bit-at-a-time reference straight from the polynomial: the third, independent implementation.
uint32_t Bitwise(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

TEST(Crc32c, ImplementationsAgreeOnEveryLengthAndAlignment) {
  std::mt19937 rng(std::random_device{}());
  // Up to 40 KB: the hardware path interleaves three streams over 12 KB chunks, then joins them.
  std::vector<uint8_t> buffer(40960 + 16);
  for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 1000, 4096, 12287, 12288, 12289, 24583, 40960}) {
      const uint8_t* p = buffer.data() + align;
      const uint32_t want = Bitwise(p, n);
      EXPECT_EQ(Crc32cPortable(p, n), want) << n << " bytes at +" << align;
      if (Crc32cHasHardware()) EXPECT_EQ(Crc32cHardware(p, n), want) << n << " bytes at +" << align;
      EXPECT_EQ(Crc32c(p, n), want);
    }
  }
}

TEST(Crc32c, ContinuesFromAnEarlierCrc) {
  std::mt19937 rng(std::random_device{}());
  std::vector<uint8_t> data(30000);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  const uint32_t whole = Crc32c(data.data(), data.size());
  for (size_t cut : {0, 1, 100, 776, 777, 12289, 29999, 30000}) {
    EXPECT_EQ(Crc32c(data.data() + cut, data.size() - cut, Crc32c(data.data(), cut)), whole) << cut;
    EXPECT_EQ(Crc32cPortable(data.data() + cut, data.size() - cut, Crc32cPortable(data.data(), cut)), whole);
  }
}

TEST(Crc32c, MaskingIsTfRecordsRotationAndDelta) {
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0x00008000u), 0x00000001u + 0xa282ead8u);  // bit 15 rotates to bit 0
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 1000; ++i) {
    const uint32_t crc = static_cast<uint32_t>(rng());
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(crc)), crc);
  }
}

}  // namespace
}  // namespace conveyor::ops
