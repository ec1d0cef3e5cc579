// A small CPU plugin for the CLI tests: `conveyor ops --plugin` and a plugin pipeline.
#include <cstdint>

#include "core/op/plugin.h"

namespace cli_example {
namespace {

using namespace conveyor;  // NOLINT: a plugin is a leaf

const OpSchema kInvertSchema = OpSchema("cli_example.invert")
                                   .Doc("out = 255 - x for uint8 images (a photographic negative).")
                                   .Input("input", {}, {DType::kUInt8})
                                   .Output("output")
                                   .Backends({Device::kCpu});

class InvertOp final : public Operator {
 public:
  explicit InvertOp(const OpSpec& spec) : Operator(spec) {}
  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }
  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      const auto* src = static_cast<const uint8_t*>(in.raw_sample(s));
      auto* dst = static_cast<uint8_t*>(out.raw_sample(s));
      for (int64_t i = 0; i < in.shape(s).num_elements(); ++i) dst[i] = static_cast<uint8_t>(255 - src[i]);
    }
  }
};

}  // namespace
}  // namespace cli_example

extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }
extern "C" void conveyor_plugin_register(conveyor::PluginRegistrar* registrar) {
  registrar->Add<cli_example::InvertOp>(cli_example::kInvertSchema);
}
