// An example Conveyor plugin: one operator, "example.scale", with a CPU and a GPU implementation.
// Built by //tests/plugins:libexample_scale.so (see docs/plugins.md for the plain command line).
#include <cmath>

#include "core/op/plugin.h"
#include "tests/plugins/scale.h"

namespace example {

void ScaleCpu(float* out, const float* in, int64_t n, float factor, float bias) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::fma(in[i], factor, bias);
}

namespace {

using namespace conveyor;  // NOLINT: a plugin is a leaf; it reads better without prefixes

const OpSchema kScaleSchema = OpSchema("example.scale")
                                  .Doc("out = in * factor + bias, element-wise, float32.")
                                  .Input("input", {}, {DType::kFloat32})
                                  .Output("output")
                                  .Arg<float>("factor", 2.0f, "Multiplier.", PerSample::kAllowed)
                                  .Arg<float>("bias", 0.0f, "Added after scaling.")
                                  .Backends({Device::kCpu, Device::kGpu});

class ScaleOp final : public Operator {
 public:
  explicit ScaleOp(const OpSpec& spec) : Operator(spec), bias_(spec.Arg<float>("bias")) {}

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc in = ws.InputDesc(0);
    if (in.dtype != DType::kFloat32) {
      throw InvalidArgument(spec().Describe() + ": expected float32 input, got " + std::string(DTypeName(in.dtype)));
    }
    return {in};
  }
  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      ScaleCpu(static_cast<float*>(out.raw_sample(s)), static_cast<const float*>(in.raw_sample(s)),
               in.shape(s).num_elements(), ws.ArgForSample<float>("factor", s), bias_);
    }
  }
  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      ScaleGpu(static_cast<float*>(out.raw_sample(s)), static_cast<const float*>(in.raw_sample(s)),
               in.shape(s).num_elements(), ws.ArgForSample<float>("factor", s), bias_, ws.stream());
    }
  }

 private:
  float bias_;
};

}  // namespace
}  // namespace example

extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }

extern "C" void conveyor_plugin_register(conveyor::PluginRegistrar* registrar) {
  registrar->Add<example::ScaleOp>(example::kScaleSchema);
}
