#include "tests/util/gpu_test.h"

#include <cstdio>
#include <cstdlib>
#include <string>

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

bool UnderComputeSanitizer() {
  const char* ours = std::getenv("CONVEYOR_UNDER_SANITIZER");
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  return (ours != nullptr && *ours == '1') ||
         (injection != nullptr && std::string(injection).find("sanitizer") != std::string::npos);
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(RngSeed());
  return rng;
}

}  // namespace conveyor::testing
