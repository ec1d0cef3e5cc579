// random.uniform and random.coin_flip: per-sample random tensors keyed by (seed, node, iteration,
// sample), identical on CPU and GPU.
//
// | op                | output                    | arguments                                    |
// |-------------------|---------------------------|----------------------------------------------|
// | random.uniform    | float32, `shape` per sample | range [lo, hi), shape (per-sample range)   |
// | random.coin_flip  | int32 0/1, `shape`        | probability (per sample allowed), shape      |
//
// GPU: PrepareGpu writes the key and per-sample descriptors into a pinned, mapped buffer of the
// slot; RunGpu launches one kernel that reads them — so a captured launch replays with fresh
// draws. The executor reuses a slot only after its previous iteration finished.
#include <cstring>

#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "operators/random/random.h"

namespace conveyor::ops {
namespace {

const OpSchema kUniformSchema =
    OpSchema("random.uniform")
        .Doc("Uniformly distributed float32 values in [range[0], range[1]).")
        .Output("output")
        .Arg<std::vector<double>>("range", std::vector<double>{0.0, 1.0}, "[lo, hi).")
        .Arg<std::vector<int64_t>>("shape", std::vector<int64_t>{}, "Shape of each sample ([] = scalar).")
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kCoinFlipSchema =
    OpSchema("random.coin_flip")
        .Doc("int32 values, 1 with the given probability and 0 otherwise.")
        .Output("output")
        .Arg<float>("probability", 0.5f, "Probability of a 1.", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<std::vector<int64_t>>("shape", std::vector<int64_t>{}, "Shape of each sample ([] = scalar).")
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

template <bool kCoin>
class RandomOp final : public Operator {
 public:
  explicit RandomOp(const OpSpec& spec) : Operator(spec) {
    const std::vector<int64_t> dims = spec.Arg<std::vector<int64_t>>("shape");
    shape_ = Shape(dims);
    if constexpr (!kCoin) {
      const std::vector<double> range = spec.Arg<std::vector<double>>("range");
      if (range.size() != 2 || !(range[0] < range[1])) {
        throw InvalidArgument(spec.Describe() + ": range must be [lo, hi] with lo < hi");
      }
      lo_ = static_cast<float>(range[0]);
      hi_ = static_cast<float>(range[1]);
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    return {{std::vector<Shape>(static_cast<size_t>(ws.batch_size()), shape_), kCoin ? DType::kInt32 : DType::kFloat32, {}}};
  }

  void RunCpu(Workspace& ws) override {
    TensorListCPU& out = ws.OutputCpu(0);
    const RandomKey key = Key(ws);
    ws.ParallelFor(out.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const RandomSample s = Sample(ws, out.raw_sample(static_cast<int>(i)), static_cast<int>(i));
        kCoin ? CoinFlipCpu(s, key) : UniformCpu(s, key);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const size_t bytes = sizeof(RandomKey) + sizeof(RandomSample) * static_cast<size_t>(out.num_samples());
    if (descriptors_.size() <= static_cast<size_t>(ws.slot())) descriptors_.resize(static_cast<size_t>(ws.slot()) + 1);
    Buffer& d = descriptors_[static_cast<size_t>(ws.slot())];
    if (d.empty() || d.size() < bytes) d = Buffer::Allocate(MemoryKind::kPinned, bytes);
    char* host = static_cast<char*>(d.host_ptr());
    const RandomKey key = Key(ws);
    std::memcpy(host, &key, sizeof(key));
    for (int i = 0; i < out.num_samples(); ++i) {
      const RandomSample s = Sample(ws, out.raw_sample(i), i);
      std::memcpy(host + sizeof(RandomKey) + sizeof(RandomSample) * static_cast<size_t>(i), &s, sizeof(s));
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    if (out.num_samples() == 0) return;
    const char* dev = static_cast<const char*>(descriptors_.at(static_cast<size_t>(ws.slot())).device_ptr());
    const auto* key = reinterpret_cast<const RandomKey*>(dev);
    const auto* samples = reinterpret_cast<const RandomSample*>(dev + sizeof(RandomKey));
    const int64_t count = shape_.num_elements();
    if constexpr (kCoin) {
      CoinFlipGpu(key, samples, out.num_samples(), count, ws.stream());
    } else {
      UniformGpu(key, samples, out.num_samples(), count, ws.stream());
    }
  }

 private:
  static RandomKey Key(const Workspace& ws) {
    return {ws.seed(), ws.node_id(), static_cast<uint64_t>(ws.iteration())};
  }
  RandomSample Sample(const Workspace& ws, void* out, int i) const {
    if constexpr (kCoin) {
      return {out, shape_.num_elements(), static_cast<uint32_t>(i), ws.ArgForSample<float>("probability", i), 0.f};
    } else {
      return {out, shape_.num_elements(), static_cast<uint32_t>(i), lo_, hi_};
    }
  }

  Shape shape_;
  float lo_ = 0, hi_ = 1;
  std::vector<Buffer> descriptors_;  // per prefetch slot: [RandomKey][RandomSample x batch]
};

const OperatorRegistration<RandomOp<false>> kUniformRegistration(kUniformSchema);
const OperatorRegistration<RandomOp<true>> kCoinFlipRegistration(kCoinFlipSchema);

}  // namespace
}  // namespace conveyor::ops
