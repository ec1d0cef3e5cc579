#include "operators/tensor/lookup_table.h"
#include "operators/tensor/sample_words.cuh"

namespace conveyor::ops {
namespace {

struct LookupBody {
  // One thread per element, grid-stride.
  template <typename In, typename W>
  __device__ static void Run(const LookupSample& s) {
    const In* in = static_cast<const In*>(s.in);
    W* out = static_cast<W*>(s.out);
    const W* entries = static_cast<const W*>(s.entries);
    for (int64_t j = FirstElement(); j < s.count; j += ElementStride()) {
      const int64_t key = static_cast<int64_t>(in[j]);
      out[j] = key >= 0 && key < s.size ? entries[key] : static_cast<W>(s.default_bits);
    }
  }
};

}  // namespace

void LookupGpu(const LookupSample* samples, int n, int64_t max_count_hint, DType in_type, cuda::StreamView stream) {
  LaunchIndexSampleKernel<LookupBody>(samples, n, max_count_hint, in_type, stream, "LookupKernel");
}

}  // namespace conveyor::ops
