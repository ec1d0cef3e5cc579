#include "operators/readers/tfrecord/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace conveyor::ops {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // Castagnoli, bit-reflected

// kTables[0] is the byte-at-a-time table; kTables[k][b] advances b's CRC through k more zero
// bytes, so eight table look-ups consume eight input bytes at once (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];  // compilers turn this into one load on x86
  return v;
}

#if defined(__x86_64__)
// The CRC instruction takes 3 cycles and issues one per cycle: three independent streams over
// three consecutive blocks of kBlock bytes keep it busy (~3x one stream's speed), and the three
// states are then joined: state(A B) = Shift(state(A), |B|) ^ state_from_zero(B), Shift being
// linear in the state (a 4 x 256 table for |B| = kBlock, made once from the instruction itself).
constexpr size_t kBlock = 4096;

__attribute__((target("sse4.2"))) uint32_t ShiftSlow(uint32_t state, size_t zeros) {
  uint64_t c = state;
  for (size_t i = 0; i < zeros / 8; ++i) c = _mm_crc32_u64(c, 0);
  return static_cast<uint32_t>(c);
}

struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t{};
  ShiftTable() {
    uint32_t bit[32];
    for (int b = 0; b < 32; ++b) bit[b] = ShiftSlow(1u << b, kBlock);
    for (int k = 0; k < 4; ++k) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t r = 0;
        for (int b = 0; b < 8; ++b) {
          if (v & (1u << b)) r ^= bit[8 * k + b];
        }
        t[static_cast<size_t>(k)][v] = r;
      }
    }
  }
  uint32_t Shift(uint32_t s) const {
    return t[0][s & 0xffu] ^ t[1][(s >> 8) & 0xffu] ^ t[2][(s >> 16) & 0xffu] ^ t[3][s >> 24];
  }
};

__attribute__((target("sse4.2"))) uint32_t HardwareImpl(const uint8_t* p, size_t size, uint32_t crc) {
  uint64_t c = ~crc;
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --size;
  }
  if (size >= 3 * kBlock) {
    static const ShiftTable shift;
    for (; size >= 3 * kBlock; size -= 3 * kBlock, p += 3 * kBlock) {
      uint64_t c1 = 0, c2 = 0;
      for (size_t i = 0; i < kBlock; i += 8) {
        uint64_t w0, w1, w2;
        std::memcpy(&w0, p + i, 8);
        std::memcpy(&w1, p + kBlock + i, 8);
        std::memcpy(&w2, p + 2 * kBlock + i, 8);
        c = _mm_crc32_u64(c, w0);
        c1 = _mm_crc32_u64(c1, w1);
        c2 = _mm_crc32_u64(c2, w2);
      }
      c = shift.Shift(shift.Shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1)) ^ static_cast<uint32_t>(c2);
    }
  }
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  for (; size > 0; --size) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return ~static_cast<uint32_t>(c);
}
#endif

using Impl = uint32_t (*)(const void*, size_t, uint32_t);

Impl Choose() { return Crc32cHasHardware() ? &Crc32cHardware : &Crc32cPortable; }

}  // namespace

uint32_t Crc32cPortable(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    const uint64_t word = LoadLittleEndian64(p) ^ crc;
    const auto lo = static_cast<uint32_t>(word);
    const auto hi = static_cast<uint32_t>(word >> 32);
    crc = kTables[7][lo & 0xffu] ^ kTables[6][(lo >> 8) & 0xffu] ^ kTables[5][(lo >> 16) & 0xffu] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xffu] ^ kTables[2][(hi >> 8) & 0xffu] ^
          kTables[1][(hi >> 16) & 0xffu] ^ kTables[0][hi >> 24];
  }
  for (; size > 0; --size) crc = kTables[0][(crc ^ *p++) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

bool Crc32cHasHardware() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
#else
  return false;
#endif
}

uint32_t Crc32cHardware(const void* data, size_t size, uint32_t crc) {
#if defined(__x86_64__)
  return HardwareImpl(static_cast<const uint8_t*>(data), size, crc);
#else
  return Crc32cPortable(data, size, crc);
#endif
}

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  static const Impl impl = Choose();
  return impl(data, size, crc);
}

}  // namespace conveyor::ops
