// Test helpers: skip without a GPU, fresh random data, poisoning.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/cuda/device.h"

// Skips the current test, with the reason, on machines without a usable CUDA device.
#define CONVEYOR_REQUIRE_GPU()                                                          \
  do {                                                                                  \
    if (!::conveyor::cuda::HasCudaDevice()) {                                           \
      GTEST_SKIP() << "needs a CUDA GPU: " << ::conveyor::cuda::NoDeviceReason();       \
    }                                                                                   \
  } while (0)

// Skips timing-sensitive concurrency checks under compute-sanitizer, which serialises every launch
// (so "still running on another stream" cannot hold). The bundle's runner sets the variable.
#define CONVEYOR_SKIP_UNDER_SANITIZER()                                                   \
  do {                                                                                    \
    if (::conveyor::testing::UnderComputeSanitizer()) {                                   \
      GTEST_SKIP() << "compute-sanitizer serialises kernel launches: concurrency not observable"; \
    }                                                                                     \
  } while (0)

namespace conveyor::testing {

bool UnderComputeSanitizer();

// A generator seeded from the test's name and a random device, printed on failure via the seed.
std::mt19937_64& Rng();
uint64_t RngSeed();

template <typename T>
std::vector<T> RandomVector(size_t n, T lo, T hi) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(lo, hi);
    for (auto& x : v) x = dist(Rng());
  } else {
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (auto& x : v) x = static_cast<T>(dist(Rng()));
  }
  return v;
}

}  // namespace conveyor::testing
