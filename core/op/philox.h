// Counter-based random numbers (Philox4x32-10) keyed by (pipeline seed, node, iteration, sample).
//
// A draw depends only on its key and its position in the sample's sequence — not on which thread
// or device makes it — so CPU and GPU kernels produce the same numbers, results do not depend on
// scheduling, and a run is reproducible. Usable from .cc and .cu files alike (host and device).
//
//   key     = (seed[0:32], seed[32:64] ^ iteration[32:64])
//   counter = (block, sample, iteration[0:32], node)       block = draw index / 4
//
// Floating-point helpers are bit-identical on host and device: they use exact scaling and an
// explicit fmaf (nvcc would otherwise contract a*b+c differently from the host compiler).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define CONVEYOR_HOST_DEVICE __host__ __device__
#else
#define CONVEYOR_HOST_DEVICE
#endif

namespace conveyor {

// A stable 32-bit id for a node name (FNV-1a), the "node" part of the key.
constexpr uint32_t NodeId(std::string_view name) {
  uint32_t h = 2166136261u;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

class Philox {
 public:
  CONVEYOR_HOST_DEVICE Philox(uint64_t seed, uint32_t node, uint64_t iteration, uint32_t sample)
      : key0_(static_cast<uint32_t>(seed)),
        key1_(static_cast<uint32_t>(seed >> 32) ^ static_cast<uint32_t>(iteration >> 32)),
        sample_(sample),
        iteration_(static_cast<uint32_t>(iteration)),
        node_(node) {}

  // Skips to draw `index` of this sample's sequence (kernels that give each thread a slice).
  CONVEYOR_HOST_DEVICE void Seek(uint64_t index) {
    block_ = static_cast<uint32_t>(index / 4);
    used_ = 4;
    skip_ = static_cast<uint32_t>(index % 4);
  }

  CONVEYOR_HOST_DEVICE uint32_t NextU32() {
    if (used_ == 4) {
      Refill();
      used_ = skip_;
      skip_ = 0;
    }
    return out_[used_++];
  }

  // Uniform in [0, 1): the top 24 bits scaled exactly.
  CONVEYOR_HOST_DEVICE float NextUniform() { return static_cast<float>(NextU32() >> 8) * 0x1p-24f; }
  // Uniform in [lo, hi).
  CONVEYOR_HOST_DEVICE float NextUniform(float lo, float hi) { return fmaf(hi - lo, NextUniform(), lo); }
  // True with probability p.
  CONVEYOR_HOST_DEVICE bool NextBernoulli(float p) { return NextUniform() < p; }

 private:
  static CONVEYOR_HOST_DEVICE void MulHiLo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
    const uint64_t p = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
  }

  CONVEYOR_HOST_DEVICE void Refill() {
    uint32_t c0 = block_++, c1 = sample_, c2 = iteration_, c3 = node_;
    uint32_t k0 = key0_, k1 = key1_;
    for (int round = 0; round < 10; ++round) {
      uint32_t hi0, lo0, hi1, lo1;
      MulHiLo(0xD2511F53u, c0, hi0, lo0);
      MulHiLo(0xCD9E8D57u, c2, hi1, lo1);
      const uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
      c0 = n0;
      c1 = n1;
      c2 = n2;
      c3 = n3;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out_[0] = c0;
    out_[1] = c1;
    out_[2] = c2;
    out_[3] = c3;
  }

  uint32_t key0_, key1_;
  uint32_t sample_, iteration_, node_;
  uint32_t block_ = 0;
  uint32_t out_[4] = {0, 0, 0, 0};
  uint32_t used_ = 4;
  uint32_t skip_ = 0;
};

}  // namespace conveyor
