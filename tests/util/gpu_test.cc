#include "tests/util/gpu_test.h"

namespace conveyor::testing {

uint64_t RngSeed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("CONVEYOR_TEST_SEED");
    const uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::fprintf(stderr, "[conveyor] random seed %llu (set CONVEYOR_TEST_SEED to repeat)\n",
                 static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(RngSeed());
  return rng;
}

}  // namespace conveyor::testing
