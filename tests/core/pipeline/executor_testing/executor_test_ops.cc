// Registration and host side of the executor's test operators (see executor_test_ops.h).
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <thread>

#include "core/cuda/check.h"
#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "tests/core/pipeline/executor_testing/executor_test_kernels.h"
#include "tests/util/test_kernels.h"

namespace conveyor::testing {
namespace {

std::mutex& TimelineMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<TimelineEvent>& TimelineStore() {
  static std::vector<TimelineEvent> events;
  return events;
}

// A host callback queued on the stream: it stamps when the GPU reaches that point.
struct PendingStamp {
  std::string node;
  int64_t iteration;
  bool start;
};
void CUDART_CB StampCallback(void* data) {
  std::unique_ptr<PendingStamp> p(static_cast<PendingStamp*>(data));
  Stamp(p->node, p->iteration, p->start);
}

}  // namespace

void Stamp(const std::string& node, int64_t iteration, bool start) {
  std::lock_guard<std::mutex> lock(TimelineMutex());
  TimelineStore().push_back({node, iteration, start, std::chrono::steady_clock::now()});
}

void StampOnStream(StreamView stream, const std::string& node, int64_t iteration, bool start) {
  auto* p = new PendingStamp{node, iteration, start};
  const cudaError_t status = cudaLaunchHostFunc(stream.get(), StampCallback, p);
  if (status != cudaSuccess) delete p;
  CONVEYOR_CUDA_CHECK(status);
}

// ---------------------------------------------------------------------------------------------

namespace {

const OpSchema kPatternSchema = OpSchema("testing.pattern")
                                    .Doc("Float samples of PatternValue(iteration, sample, i).")
                                    .Output("out")
                                    .Arg<int64_t>("min_size", 16, "Smallest sample (elements).")
                                    .Min(0)
                                    .Arg<int64_t>("max_size", 16, "Largest sample (elements).")
                                    .Min(0)
                                    .Arg<int64_t>("grow_at", -1, "Iteration from which sizes are 4x (-1: never).")
                                    .Arg<double>("sleep_ms", 0.0, "Host time each iteration takes.")
                                    .Min(0)
                                    .Arg<int64_t>("fail_at", -1, "Iteration at which RunCpu throws (-1: never).")
                                    .Arg<bool>("record", false, "Record host timestamps.")
                                    .Arg<bool>("write", true, "Write the pattern (false: staging benchmarks).")
                                    .Backends({Device::kCpu});

class PatternOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace& ws) override {
    OutputDesc desc;
    desc.dtype = DType::kFloat32;
    for (int s = 0; s < ws.batch_size(); ++s) {
      desc.shapes.push_back(Shape{PatternSize(ws.iteration(), s, ws.Arg<int64_t>("min_size"),
                                              ws.Arg<int64_t>("max_size"), ws.Arg<int64_t>("grow_at"))});
    }
    return {desc};
  }
  void RunCpu(Workspace& ws) override {
    const bool record = ws.Arg<bool>("record");
    if (record) Stamp(spec().name(), ws.iteration(), true);
    const double sleep_ms = ws.Arg<double>("sleep_ms");
    if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms));
    if (ws.iteration() == ws.Arg<int64_t>("fail_at")) {
      throw InvalidArgument("failing on purpose at iteration " + std::to_string(ws.iteration()));
    }
    TensorListCPU& out = ws.OutputCpu(0);
    const int64_t iteration = ws.iteration();
    if (ws.Arg<bool>("write")) ws.ParallelFor(out.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t s = begin; s < end; ++s) {
        float* p = static_cast<float*>(out.raw_sample(static_cast<int>(s)));
        const int64_t n = out.shape(static_cast<int>(s)).num_elements();
        for (int64_t i = 0; i < n; ++i) p[i] = PatternValue(iteration, static_cast<int>(s), i);
      }
    });
    if (record) Stamp(spec().name(), ws.iteration(), false);
  }
};

const OpSchema kGpuSpinSchema = OpSchema("testing.gpu_spin")
                                    .Doc("Spins on the GPU, then out = in + add.")
                                    .Input("in", {}, {DType::kFloat32})
                                    .Output("out")
                                    .Arg<double>("spin_ms", 0.0, "GPU time each iteration takes.")
                                    .Min(0)
                                    .Arg<double>("add", 0.0, "Added to every element.")
                                    .Arg<int64_t>("fail_at", -1, "Iteration at which RunGpu throws (-1: never).")
                                    .Arg<bool>("record", false, "Record host timestamps around the GPU work.")
                                    .Backends({Device::kGpu});

class GpuSpinOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }
  void RunGpu(Workspace& ws) override {
    if (ws.iteration() == ws.Arg<int64_t>("fail_at")) {
      throw InvalidArgument("failing on purpose at iteration " + std::to_string(ws.iteration()));
    }
    const bool record = ws.Arg<bool>("record");
    if (record) StampOnStream(ws.stream(), spec().name(), ws.iteration(), true);
    const double spin_ms = ws.Arg<double>("spin_ms");
    if (spin_ms > 0) SpinGpu(spin_ms, ws.stream());
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Same shapes, same offsets: one launch over the whole batch (padding included).
    if (in.nbytes() > 0) {
      AddGpu(static_cast<float*>(out.buffer().device_ptr()), static_cast<const float*>(in.buffer().device_ptr()),
             static_cast<float>(ws.Arg<double>("add")), static_cast<int64_t>(in.nbytes() / sizeof(float)),
             ws.stream());
    }
    if (record) StampOnStream(ws.stream(), spec().name(), ws.iteration(), false);
  }
};

const OpSchema kAugmentSchema = OpSchema("testing.augment")
                                    .Doc("out = fmaf(in, scale, bias), per-sample Philox draws from descriptors.")
                                    .Input("in", {}, {DType::kFloat32})
                                    .Output("out")
                                    .Backends({Device::kGpu})
                                    .Capturable();

class AugmentOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }
  void PrepareGpu(Workspace& ws) override {
    const size_t slot = static_cast<size_t>(ws.slot());
    if (descs_.size() <= slot) {
      descs_.resize(slot + 1);
      device_descs_.resize(slot + 1);
    }
    const size_t bytes = sizeof(AugmentDesc) * static_cast<size_t>(std::max(1, ws.batch_size()));
    // Per slot: the executor rewrites a slot only after its previous GPU work finished.
    if (descs_[slot].empty() || descs_[slot].size() < bytes) {
      descs_[slot] = Buffer::Allocate(MemoryKind::kPinned, bytes);
      // Looked up here, not in RunGpu: no CUDA API call but the launch happens while capturing.
      device_descs_[slot] = static_cast<const AugmentDesc*>(descs_[slot].device_ptr());
    }
    auto* d = static_cast<AugmentDesc*>(descs_[slot].host_ptr());
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    for (int s = 0; s < in.num_samples(); ++s) {
      const AugmentParams p = DrawAugment(ws.seed(), ws.node_id(), ws.iteration(), s);
      d[s] = AugmentDesc{static_cast<const float*>(in.raw_sample(s)), static_cast<float*>(out.raw_sample(s)),
                         in.shape(s).num_elements(), p.scale, p.bias};
    }
  }
  void RunGpu(Workspace& ws) override {
    const size_t slot = static_cast<size_t>(ws.slot());
    const TensorListGPU& in = ws.InputGpu(0);
    AugmentGpu(device_descs_.at(slot), in.num_samples(), static_cast<int64_t>(in.buffer().size() / sizeof(float)),
               ws.stream());
  }

 private:
  std::vector<Buffer> descs_;  // [slot]: pinned, mapped
  std::vector<const AugmentDesc*> device_descs_;  // [slot]: their device addresses
};

const OperatorRegistration<PatternOp> kPatternRegistration(kPatternSchema);
const OperatorRegistration<GpuSpinOp> kGpuSpinRegistration(kGpuSpinSchema);
const OperatorRegistration<AugmentOp> kAugmentRegistration(kAugmentSchema);

}  // namespace

int64_t PatternSize(int64_t iteration, int sample, int64_t min_size, int64_t max_size, int64_t grow_at) {
  int64_t n = max_size;
  if (iteration >= kPatternWarmup && max_size > min_size) {
    Philox rng(99, 0, static_cast<uint64_t>(iteration), static_cast<uint32_t>(sample));
    n = min_size + static_cast<int64_t>(rng.NextU32() % static_cast<uint32_t>(max_size - min_size + 1));
  }
  if (grow_at >= 0 && iteration >= grow_at) n *= 4;
  return n;
}

void ClearTimeline() {
  std::lock_guard<std::mutex> lock(TimelineMutex());
  TimelineStore().clear();
}

std::vector<TimelineEvent> Timeline() {
  std::lock_guard<std::mutex> lock(TimelineMutex());
  return TimelineStore();
}

}  // namespace conveyor::testing
