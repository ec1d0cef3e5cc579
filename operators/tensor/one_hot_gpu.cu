#include "operators/tensor/one_hot.h"
#include "operators/tensor/sample_words.cuh"

namespace conveyor::ops {
namespace {

struct OneHotBody {
  // One thread per output element, grid-stride.
  template <typename In, typename W>
  __device__ static void Run(const OneHotSample& s) {
    const In* in = static_cast<const In*>(s.in);
    W* out = static_cast<W*>(s.out);
    const int64_t total = s.outer * s.classes * s.inner;
    for (int64_t j = FirstElement(); j < total; j += ElementStride()) {
      const int64_t i = j % s.inner;
      const int64_t t = j / s.inner;
      out[j] = static_cast<W>(static_cast<int64_t>(in[(t / s.classes) * s.inner + i]) == t % s.classes ? s.on : s.off);
    }
  }
};

}  // namespace

void OneHotGpu(const OneHotSample* samples, int n, int64_t max_count_hint, DType in_type, cuda::StreamView stream) {
  LaunchIndexSampleKernel<OneHotBody>(samples, n, max_count_hint, in_type, stream, "OneHotKernel");
}

}  // namespace conveyor::ops
