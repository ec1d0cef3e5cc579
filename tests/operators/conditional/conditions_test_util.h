// Helpers for the tests of node conditions (`enable:` / `probability:`): the references a
// conditioned pipeline must equal — the node run alone on the same batch, and the hidden coin's
// draws reproduced from the seed — and a per-sample byte comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/op/harness.h"
#include "core/pipeline/conditions.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/resize/image_test_util.h"
#include "tests/util/pipeline_outputs.h"

namespace conveyor::testing {

// Whether sample i of `a` and sample j of `b` have one shape, one dtype and the same bytes.
inline bool SameSample(const TensorListCPU& a, int i, const TensorListCPU& b, int j) {
  if (a.dtype() != b.dtype() || a.shape(i) != b.shape(j)) return false;
  const size_t bytes = static_cast<size_t>(a.shape(i).num_elements()) * DTypeSize(a.dtype());
  return bytes == 0 || std::memcmp(a.raw_sample(i), b.raw_sample(j), bytes) == 0;
}

// `spec` run alone on the CPU over `input` (seed and iteration as the pipeline's).
inline TensorListCPU RunAlone(OpSpec spec, const TensorListCPU& input, uint64_t seed, int64_t iteration,
                              const std::vector<std::pair<std::string, TensorListCPU>>& args = {}) {
  OpHarness h(std::move(spec), Device::kCpu, input.num_samples());
  h.SetInput(0, input);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  h.set_seed(seed);
  h.set_iteration(iteration);
  h.Run();
  return h.OutputToHost(0);
}

// The draws of the coin that `probability: p` on node `node` inserts (conditions.h), reproduced
// from the pipeline's seed: int32 0/1 per sample.
inline std::vector<int> ConditionCoin(const std::string& node, double p, uint64_t seed, int64_t iteration, int n) {
  OpHarness h(OpSpec("random.coin_flip", ConditionCoinName(node)).SetArg("probability", p).AddOutput("c"),
              Device::kCpu, n);
  h.set_seed(seed);
  h.set_iteration(iteration);
  h.Run();
  const TensorListCPU c = h.OutputToHost(0);
  std::vector<int> draws;
  for (int s = 0; s < n; ++s) draws.push_back(At<int32_t>(c, s, 0));
  return draws;
}

// Images of random sizes (8..40 x 8..48, 3 channels), fresh random pixels.
inline TensorListCPU VaryingImages(int n) {
  std::vector<Shape> shapes;
  for (int s = 0; s < n; ++s) shapes.push_back(Shape{RandomVector<int>(1, 8, 40)[0], RandomVector<int>(1, 8, 48)[0], 3});
  return RandomImages(shapes, DType::kUInt8);
}

// Checks that every sample of `got` is `computed`'s where `selected`, else `input`'s, and that
// the two differ there (so the check can tell them apart). Returns how many were selected.
inline int ExpectSelected(const TensorListCPU& got, const TensorListCPU& input, const TensorListCPU& computed,
                          const std::vector<int>& selected, const std::string& where) {
  EXPECT_EQ(got.num_samples(), input.num_samples()) << where;
  int count = 0;
  for (int s = 0; s < got.num_samples() && s < static_cast<int>(selected.size()); ++s) {
    EXPECT_FALSE(SameSample(input, s, computed, s)) << where << ": sample " << s << " is its own result";
    const bool want_computed = selected[static_cast<size_t>(s)] != 0;
    count += want_computed ? 1 : 0;
    EXPECT_TRUE(SameSample(got, s, want_computed ? computed : input, s))
        << where << ": sample " << s << " should be the " << (want_computed ? "node's result" : "input unchanged")
        << " (got shape " << got.shape(s).ToString() << ")";
  }
  return count;
}

}  // namespace conveyor::testing
