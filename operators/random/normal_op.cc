// random.normal: per-sample normally distributed tensors keyed by (seed, node, iteration,
// sample); the same draws on CPU and GPU up to libm differences (operators/random/normal.h).
//
// | output                         | arguments                                               |
// |--------------------------------|---------------------------------------------------------|
// | float32 (default) or float16,  | mean, stddev (per sample allowed, stddev ≥ 0), shape,   |
// | `shape` per sample             | dtype                                                   |
//
// GPU: PrepareGpu writes the key and per-sample descriptors; RunGpu uploads them and launches one
// kernel whose grid depends only on `shape` and the sample count: capturable.
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/random/random.h"

namespace conveyor::ops {
namespace {

const OpSchema kNormalSchema =
    OpSchema("random.normal")
        .Doc("Normally distributed values: mean + stddev * z, z ~ N(0, 1) by Box–Muller from Philox uniforms.")
        .Output("output")
        .Arg<float>("mean", 0.0f, "Mean.", PerSample::kAllowed)
        .Arg<float>("stddev", 1.0f, "Standard deviation (≥ 0).", PerSample::kAllowed)
        .Min(0)
        .Arg<std::vector<int64_t>>("shape", std::vector<int64_t>{}, "Shape of each sample ([] = scalar).")
        .Min(0)
        .Arg<DType>("dtype", DType::kFloat32, "float32 or float16.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class NormalOp final : public Operator {
 public:
  explicit NormalOp(const OpSpec& spec)
      : Operator(spec), shape_(spec.Arg<std::vector<int64_t>>("shape")), dtype_(spec.Arg<DType>("dtype")) {
    if (dtype_ != DType::kFloat32 && dtype_ != DType::kFloat16) {
      throw InvalidArgument(spec.Describe() + ": argument \"dtype\": expected float32 or float16, got " +
                            std::string(DTypeName(dtype_)));
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    for (int i = 0; i < ws.batch_size(); ++i) {
      const float stddev = ws.ArgForSample<float>("stddev", i);
      if (!(stddev >= 0)) {
        throw InvalidArgument(spec().Describe() + ": argument \"stddev\": expected a value >= 0, got " +
                              std::to_string(stddev) + " at sample " + std::to_string(i));
      }
    }
    return {{std::vector<Shape>(static_cast<size_t>(ws.batch_size()), shape_), dtype_, {}}};
  }

  void RunCpu(Workspace& ws) override {
    TensorListCPU& out = ws.OutputCpu(0);
    const RandomKey key = Key(ws);
    ws.ParallelFor(out.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) NormalCpu(Sample(ws, out.raw_sample(static_cast<int>(i)), static_cast<int>(i)), key, dtype_);
    });
  }

  void PrepareGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    *keys_.Write(ws.slot(), 1, ws.stream()) = Key(ws);
    RandomSample* d = samples_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) d[i] = Sample(ws, out.raw_sample(i), i);
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    if (out.num_samples() == 0) return;
    const RandomKey* key = keys_.Upload(ws.slot(), ws.stream());
    const RandomSample* samples = samples_.Upload(ws.slot(), ws.stream());
    NormalGpu(key, samples, out.num_samples(), shape_.num_elements(), dtype_, ws.stream());
  }

 private:
  static RandomKey Key(const Workspace& ws) { return {ws.seed(), ws.node_id(), static_cast<uint64_t>(ws.iteration())}; }
  RandomSample Sample(const Workspace& ws, void* out, int i) const {
    return {out, shape_.num_elements(), static_cast<uint32_t>(i), ws.ArgForSample<float>("mean", i),
            ws.ArgForSample<float>("stddev", i)};
  }

  Shape shape_;
  DType dtype_;
  SlotDescriptors<RandomKey> keys_;
  SlotDescriptors<RandomSample> samples_;
};

const OperatorRegistration<NormalOp> kRegistration(kNormalSchema);

}  // namespace
}  // namespace conveyor::ops
