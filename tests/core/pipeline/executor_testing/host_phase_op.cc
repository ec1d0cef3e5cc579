// testing.host_phase: the executor's third operator shape, a GPU operator with a host phase
// (operator.h), as a decoder has it: its input is host-placed (encoded bytes stay on the host),
// Setup reads the host input to size the output, RunGpu first transforms every sample on the
// executor's TBB pool into per-slot pinned staging, then queues an async copy and a kernel on
// ws.stream(). Not capturable: the host phase runs every iteration.
//
// | argument  | meaning                                                                   |
// |-----------|---------------------------------------------------------------------------|
// | add       | added to every output element (out = float(255 - in) + add)               |
// | sleep_ms  | host time each sample's host phase takes (to measure overlap)             |
// | spin_ms   | GPU time before the copy (to measure overlap)                             |
// | record    | timeline events "<node>:host" (host phase) and "<node>:gpu" (GPU work)    |
//
// LookAhead (operator.h) and RunGpu both log the iteration and a checksum of the input they see
// (HostPhaseLooks), so tests can check what the executor showed ahead and when.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "core/tensor/copy.h"
#include "tests/core/pipeline/executor_testing/executor_test_kernels.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"
#include "tests/util/test_kernels.h"

namespace conveyor::testing {
namespace {

std::atomic<int> g_max_threads{0};
std::mutex g_looks_mu;
std::vector<HostPhaseLook> g_looks;

uint64_t Checksum(const TensorListCPU& in) {
  uint64_t h = 1469598103934665603ull;
  for (int s = 0; s < in.num_samples(); ++s) {
    const auto* p = static_cast<const uint8_t*>(in.raw_sample(s));
    const int64_t n = in.shape(s).num_elements();
    h = (h ^ static_cast<uint64_t>(n)) * 1099511628211ull;
    for (int64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  return h;
}

void Log(const Workspace& ws, bool ahead) {
  HostPhaseLook look{ws.iteration(), Checksum(ws.InputCpu(0)), ahead, std::chrono::steady_clock::now()};
  std::lock_guard<std::mutex> lock(g_looks_mu);
  g_looks.push_back(look);
}
std::atomic<int> g_input_kinds{0};  // bit per MemoryKind of the host input seen in RunGpu

const OpSchema kHostPhaseSchema =
    OpSchema("testing.host_phase")
        .Doc("GPU op with a host phase: 255 - in on the pool into pinned staging, copy + kernel.")
        .Input("in", {}, {DType::kUInt8}, Placement::kHost, "Host bytes, read in Setup and the host phase.")
        .Output("out")
        .Arg<double>("add", 0.0, "Added to every element.")
        .Arg<double>("sleep_ms", 0.0, "Host time each sample's host phase takes.")
        .Min(0)
        .Arg<double>("spin_ms", 0.0, "GPU time before the copy.")
        .Min(0)
        .Arg<bool>("record", false, "Record timeline events of the host phase and the GPU work.")
        .Backends({Device::kGpu});

class HostPhaseOp final : public Operator {
 public:
  using Operator::Operator;

  // The input is on the host: its shapes (a decoder would parse headers here) size the output.
  OutputDescs Setup(const Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    OutputDesc desc;
    desc.dtype = DType::kFloat32;
    for (int s = 0; s < in.num_samples(); ++s) {
      if (in.shape(s).ndim() != 1) {
        throw InvalidArgument(spec().Describe() + ": sample " + std::to_string(s) + " has shape " +
                              in.shape(s).ToString() + ", expected 1-D bytes");
      }
      desc.shapes.push_back(in.shape(s));
    }
    return {desc};
  }

  void LookAhead(const Workspace& ws) override { Log(ws, true); }

  void RunGpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    Log(ws, false);
    if (!in.buffer().empty()) g_input_kinds.fetch_or(1 << static_cast<int>(in.buffer().kind()));
    const size_t slot = static_cast<size_t>(ws.slot());
    if (staging_.size() <= slot) {
      staging_.resize(slot + 1);
      device_.resize(slot + 1);
    }
    // One byte per output element, padding included, so the kernel converts the whole range at
    // once and writes the output's padding too (initcheck: nothing downstream reads unwritten
    // bytes).
    const int64_t elements = static_cast<int64_t>(out.nbytes() / sizeof(float));
    if (elements == 0) return;
    const size_t bytes = static_cast<size_t>(elements);
    // Per-slot staging: the executor rewrites slot s only after slot s's previous GPU work (the
    // copy below) finished, so it is reused without waiting.
    if (staging_[slot].empty() || staging_[slot].size() < bytes) {
      staging_[slot] = Buffer::Allocate(MemoryKind::kPinned, bytes);
      device_[slot] = Buffer::Allocate(MemoryKind::kDevice, bytes, ws.stream());
    }
    auto* staging = static_cast<uint8_t*>(staging_[slot].host_ptr());

    // Host phase, on the executor's pool.
    const bool record = ws.Arg<bool>("record");
    const std::string& name = spec().name();
    if (record) Stamp(name + ":host", ws.iteration(), true);
    const double sleep_ms = ws.Arg<double>("sleep_ms");
    std::mutex threads_mu;
    std::set<std::thread::id> threads;
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      {
        std::lock_guard<std::mutex> lock(threads_mu);
        threads.insert(std::this_thread::get_id());
      }
      for (int64_t s = begin; s < end; ++s) {
        const int i = static_cast<int>(s);
        if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms));
        const auto* src = static_cast<const uint8_t*>(in.raw_sample(i));
        const int64_t n = in.shape(i).num_elements();
        const int64_t at = out.offset(i) / static_cast<int64_t>(sizeof(float));
        const int64_t next = i + 1 < out.num_samples() ? out.offset(i + 1) / static_cast<int64_t>(sizeof(float))
                                                       : elements;
        for (int64_t k = 0; k < n; ++k) staging[at + k] = static_cast<uint8_t>(255 - src[k]);
        std::memset(staging + at + n, 0, static_cast<size_t>(next - at - n));
      }
    });
    int seen = g_max_threads.load();
    const int mine = static_cast<int>(threads.size());
    while (mine > seen && !g_max_threads.compare_exchange_weak(seen, mine)) {
    }
    if (record) Stamp(name + ":host", ws.iteration(), false);

    // Device phase, on the executor's stream.
    const StreamView stream = ws.stream();
    if (record) StampOnStream(stream, name + ":gpu", ws.iteration(), true);
    const double spin_ms = ws.Arg<double>("spin_ms");
    if (spin_ms > 0) SpinGpu(spin_ms, stream);
    CopyBytesAsync(device_[slot].device_ptr(), staging, bytes, stream);
    BytesToFloatGpu(static_cast<float*>(out.buffer().device_ptr()),
                    static_cast<const uint8_t*>(device_[slot].device_ptr()), static_cast<float>(ws.Arg<double>("add")),
                    elements, stream);
    if (record) StampOnStream(stream, name + ":gpu", ws.iteration(), false);
  }

 private:
  std::vector<Buffer> staging_;  // [slot]: pinned, written by the host phase
  std::vector<Buffer> device_;   // [slot]: the device copy the kernel reads
};

const OperatorRegistration<HostPhaseOp> kHostPhaseRegistration(kHostPhaseSchema);

}  // namespace

int HostPhaseMaxThreads() { return g_max_threads.load(); }
void ResetHostPhaseMaxThreads() { g_max_threads.store(0); }
std::vector<MemoryKind> HostPhaseInputKinds() {
  std::vector<MemoryKind> kinds;
  for (MemoryKind k : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice}) {
    if (g_input_kinds.load() & (1 << static_cast<int>(k))) kinds.push_back(k);
  }
  return kinds;
}
void ResetHostPhaseInputKinds() { g_input_kinds.store(0); }
std::vector<HostPhaseLook> HostPhaseLooks() {
  std::lock_guard<std::mutex> lock(g_looks_mu);
  return g_looks;
}
void ClearHostPhaseLooks() {
  std::lock_guard<std::mutex> lock(g_looks_mu);
  g_looks.clear();
}

}  // namespace conveyor::testing
