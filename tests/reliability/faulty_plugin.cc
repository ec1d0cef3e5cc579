// reliability.faulty: the plugin operator of the fault tests (tests/reliability/faults*_test.cc).
// It copies its float32 input to its output — on the CPU, or on the GPU with one stream-ordered
// copy — and misbehaves on request, so the executor's error paths meet a real plugin .so.
//
// | argument   | default | meaning                                                         |
// |------------|---------|-----------------------------------------------------------------|
// | fail_at    | -1      | Run throws InvalidArgument at this iteration (-1: never)        |
// | fail_from  | -1      | Run throws at this iteration and every later one (-1: never)    |
// | sleep_ms   | 0       | host time spent in Run before the copy, every iteration         |
// | fail_in_constructor | false | the constructor throws InvalidArgument (naming no argument) |
//
// reliability_faulty_running() (a C symbol the tests look up with dlsym) counts the Run calls in
// progress, so a test can act while the stage thread is inside the operator.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/op/plugin.h"
#include "core/tensor/copy.h"

namespace reliability {
namespace {

using namespace conveyor;  // NOLINT: a plugin is a leaf; it reads better without prefixes

std::atomic<int> g_running{0};

const OpSchema kFaultySchema =
    OpSchema("reliability.faulty")
        .Doc("Copies its float32 input; throws at iteration fail_at (or from fail_from on); dawdles sleep_ms.")
        .Input("input", {}, {DType::kFloat32})
        .Output("output")
        .Arg<int64_t>("fail_at", -1, "Iteration at which Run throws (-1: never).")
        .Arg<int64_t>("fail_from", -1, "First iteration of many at which Run throws (-1: never).")
        .Arg<double>("sleep_ms", 0.0, "Host time spent in Run before the copy.")
        .Min(0)
        .Arg<bool>("fail_in_constructor", false, "The constructor throws.")
        .Backends({Device::kCpu, Device::kGpu});

class FaultyOp final : public Operator {
 public:
  explicit FaultyOp(const OpSpec& spec)
      : Operator(spec),
        fail_at_(spec.Arg<int64_t>("fail_at")),
        fail_from_(spec.Arg<int64_t>("fail_from")),
        sleep_ms_(spec.Arg<double>("sleep_ms")) {
    if (spec.Arg<bool>("fail_in_constructor")) {
      throw InvalidArgument(spec.Describe() + ": injected fault while constructing the operator");
    }
  }

  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }

  void RunCpu(Workspace& ws) override {
    Enter(ws);
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      std::memcpy(out.raw_sample(s), in.raw_sample(s), static_cast<size_t>(in.shape(s).num_elements()) * 4);
    }
    g_running.fetch_sub(1);
  }

  void RunGpu(Workspace& ws) override {
    Enter(ws);
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      CopyBytesAsync(out.raw_sample(s), in.raw_sample(s), static_cast<size_t>(in.shape(s).num_elements()) * 4,
                     ws.stream());
    }
    g_running.fetch_sub(1);
  }

 private:
  // Counts the call as running, dawdles, and throws when this iteration is a failing one.
  void Enter(const Workspace& ws) const {
    g_running.fetch_add(1);
    if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms_));
    const int64_t k = ws.iteration();
    if (k == fail_at_ || (fail_from_ >= 0 && k >= fail_from_)) {
      g_running.fetch_sub(1);
      throw InvalidArgument(spec().Describe() + ": injected fault at iteration " + std::to_string(k));
    }
  }

  int64_t fail_at_;
  int64_t fail_from_;
  double sleep_ms_;
};

}  // namespace
}  // namespace reliability

extern "C" int reliability_faulty_running() { return reliability::g_running.load(); }

extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }

extern "C" void conveyor_plugin_register(conveyor::PluginRegistrar* registrar) {
  registrar->Add<reliability::FaultyOp>(reliability::kFaultySchema);
}
