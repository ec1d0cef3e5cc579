// jitter: DALI's operator — each output pixel copies an input pixel moved by a random offset of
// up to about nDegree / 2 along x and y (jitter.h for the draws and the border).
//
// | input                          | output      | per sample                                  |
// |--------------------------------|-------------|---------------------------------------------|
// | HWC (any channels) or HW;      | the input's | nDegree (0..2^20), mask (0: unchanged, 1:   |
// | uint8, float16, bfloat16,      | shape and   | jittered)                                   |
// | float32                        | dtype       |                                             |
//
// Draws are keyed by (seed, node, iteration, sample): reproducible, the same on CPU and GPU (bit
// for bit). The key travels in each sample's descriptor, written every iteration: GPU one launch
// per batch, capturable (a replay draws afresh).
#include "core/op/registry.h"
#include "operators/geometry/jitter.h"
#include "operators/image_common/image_args.h"
#include "operators/image_common/sample_kernel_op.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("jitter")
        .Doc("Moves each pixel by a random offset in [-floor(nDegree / 2), nDegree - floor(nDegree / 2)] along x "
             "and y (DALI's jitter); sources beyond the edge are clamped to it.")
        .Input("images", {"HWC", "HW"}, kTypes)
        .Output("output")
        .Arg<int>("nDegree", 2, "Spread of the offsets: nDegree + 1 whole-pixel values per axis (0: none).",
                  PerSample::kAllowed)
        .Range(0, kMaxJitterDegree)
        .Arg<int>("mask", 1, "1: jitter the sample; 0: pass it through unchanged.", PerSample::kAllowed)
        .Range(0, 1)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class JitterOp final : public SampleKernelOp<JitterSample, JitterCpu, JitterGpu> {
 public:
  using SampleKernelOp::SampleKernelOp;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, kTypes);
    samples_.assign(d.shapes.size(), JitterSample{});
    const SampleArg<int> degree(ws, "nDegree"), mask(ws, "mask");
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      JitterSample& s = samples_[i];
      s.height = static_cast<int32_t>(d.shapes[i][0]);
      s.width = static_cast<int32_t>(d.shapes[i][1]);
      s.channels = layout == "HWC" ? static_cast<int32_t>(d.shapes[i][2]) : 1;
      s.n_degree = Checked("nDegree", degree(si), kMaxJitterDegree, si);
      s.apply = Checked("mask", mask(si), 1, si);
      s.sample = static_cast<uint32_t>(si);
      s.seed = ws.seed();
      s.iteration = static_cast<uint64_t>(ws.iteration());
      s.node = ws.node_id();
    }
    return {d};
  }

 private:
  // Fed values are checked here; constants were checked against the schema's range already.
  int32_t Checked(const char* name, int value, int hi, int sample) const {
    if (value < 0 || value > hi) {
      throw InvalidArgument(spec().Describe() + ": argument \"" + name + "\": expected a value in [0, " +
                            std::to_string(hi) + "], got " + std::to_string(value) + " at sample " +
                            std::to_string(sample));
    }
    return value;
  }
};

const OperatorRegistration<JitterOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
