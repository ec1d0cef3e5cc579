// Workspace: everything one operator sees during one iteration — its inputs and outputs, argument
// values (constant from the spec or per sample from another node), the CUDA stream (GPU), the CPU
// thread pool, the iteration index and a counter-based RNG.
//
// The executor (or OpTestHarness) builds one per node and slot and rebinds it every iteration:
//
//   Workspace ws(spec, batch_size);
//   ws.AddInput(producer_output);           // TensorListCPU or TensorListGPU, in schema order
//   ws.SetArgInput("mirror", flip_values);  // a TensorListCPU with one scalar per sample
//   OutputDescs descs = op.Setup(ws);       // before outputs are bound
//   out.Resize(descs[0].shapes, descs[0].dtype, stream); ws.AddOutput(out);
//   ws.set_stream(stream); ws.set_iteration(k);
//   op.RunGpu(ws);
//
// The workspace never owns tensors: it points at lists the executor keeps alive for the call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/philox.h"
#include "core/op/spec.h"
#include "core/op/thread_pool.h"
#include "core/tensor/tensor_list.h"

namespace conveyor {

// What Setup returns per output, and what InputDesc() reports per input.
struct TensorListDesc {
  std::vector<Shape> shapes;  // one per sample
  DType dtype = DType::kUInt8;
  Layout layout;
  friend bool operator==(const TensorListDesc& a, const TensorListDesc& b) {
    return a.shapes == b.shapes && a.dtype == b.dtype && a.layout == b.layout;
  }
};
using OutputDesc = TensorListDesc;
using OutputDescs = std::vector<OutputDesc>;

class Workspace {
 public:
  // `spec` must outlive the workspace. `batch_size` is the number of samples this iteration (what
  // a source operator produces; operators with inputs get as many samples as their inputs have).
  Workspace(const OpSpec& spec, int batch_size);

  // --- Binding (executor, harness) ---
  void AddInput(const TensorListCPU& input) { inputs_.emplace_back(&input); }
  void AddInput(const TensorListGPU& input) { inputs_.emplace_back(&input); }
  void AddOutput(TensorListCPU& output) { outputs_.emplace_back(&output); }
  void AddOutput(TensorListGPU& output) { outputs_.emplace_back(&output); }
  // Per-sample values for an argument: sample i of `values` holds the value for sample i (a scalar,
  // or a 1-D tensor for list arguments). Host memory, because operators read them on the host.
  void SetArgInput(const std::string& arg, const TensorListCPU& values) { arg_inputs_[arg] = &values; }
  void ClearInputs() { inputs_.clear(); }
  void ClearOutputs() { outputs_.clear(); }
  void set_batch_size(int batch_size) { batch_size_ = batch_size; }
  void set_stream(StreamView stream) { stream_ = stream; }
  void set_thread_pool(CpuThreadPool* pool) { thread_pool_ = pool; }
  void set_iteration(int64_t iteration) { iteration_ = iteration; }
  void set_seed(uint64_t seed) { seed_ = seed; }
  // The prefetch slot this iteration runs in: operators that keep per-slot descriptor buffers
  // (for captured graphs) index them with it.
  void set_slot(int slot) { slot_ = slot; }

  // --- What an operator reads ---
  const OpSpec& spec() const { return *spec_; }
  int batch_size() const { return batch_size_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool InputIsGpu(int i) const;
  bool OutputIsGpu(int i) const;
  // Throw InvalidArgument naming the node when the index is out of range or the backend differs.
  const TensorListCPU& InputCpu(int i) const;
  const TensorListGPU& InputGpu(int i) const;
  TensorListCPU& OutputCpu(int i) const;
  TensorListGPU& OutputGpu(int i) const;
  // Shapes, dtype and layout of input i, whichever backend holds it.
  TensorListDesc InputDesc(int i) const;

  // The constant value of an argument (spec value or schema default). Throws InvalidArgument when
  // the argument is fed per sample — use ArgForSample / ArgPerSample for those.
  template <typename T>
  T Arg(const std::string& name) const {
    CheckNotPerSample(name);
    return spec_->Arg<T>(name);
  }
  bool IsArgPerSample(const std::string& name) const { return arg_inputs_.count(name) != 0; }
  // The list feeding argument `name` per sample, or null when it is not fed (for operators that
  // check the feed's shapes and dtype themselves).
  const TensorListCPU* ArgInput(const std::string& name) const {
    const auto it = arg_inputs_.find(name);
    return it == arg_inputs_.end() ? nullptr : it->second;
  }
  // The value for one sample: the fed value when the argument is fed, else the constant.
  // T: bool, an integral or floating-point type, or a std::vector of those.
  template <typename T>
  T ArgForSample(const std::string& name, int sample) const;
  // The values for every sample of the batch.
  template <typename T>
  std::vector<T> ArgPerSample(const std::string& name) const {
    std::vector<T> out;
    out.reserve(static_cast<size_t>(batch_size_));
    for (int i = 0; i < batch_size_; ++i) out.push_back(ArgForSample<T>(name, i));
    return out;
  }

  // The stream a GPU operator must queue all its work on. Throws InvalidArgument when unset (a CPU
  // workspace): there is no fallback to the legacy default stream.
  StreamView stream() const;
  bool has_stream() const { return stream_.has_value(); }
  // Null when the caller gave none; ParallelFor then runs inline.
  CpuThreadPool* thread_pool() const { return thread_pool_; }
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const;
  // CpuThreadPool::RunBeside on the pool; without one, `a` then `b` on the calling thread.
  void RunBeside(const std::function<void()>& a, const std::function<void()>& b) const;

  int64_t iteration() const { return iteration_; }
  uint64_t seed() const { return seed_; }
  int slot() const { return slot_; }
  uint32_t node_id() const { return node_id_; }
  // The random stream of one sample of this node in this iteration (same draws on CPU and GPU:
  // GPU kernels build Philox(seed(), node_id(), iteration(), sample) themselves).
  Philox Rng(int sample) const { return Philox(seed_, node_id_, static_cast<uint64_t>(iteration_), static_cast<uint32_t>(sample)); }

 private:
  void CheckNotPerSample(const std::string& name) const;
  const TensorListCPU& FedValues(const std::string& name, int sample) const;
  // Element `index` of sample `sample` of `values`, converted from its dtype.
  static double ReadNumber(const TensorListCPU& values, int sample, int64_t index);

  const OpSpec* spec_;
  int batch_size_;
  uint32_t node_id_;
  std::vector<std::variant<const TensorListCPU*, const TensorListGPU*>> inputs_;
  std::vector<std::variant<TensorListCPU*, TensorListGPU*>> outputs_;
  std::map<std::string, const TensorListCPU*> arg_inputs_;
  std::optional<StreamView> stream_;
  CpuThreadPool* thread_pool_ = nullptr;
  int64_t iteration_ = 0;
  uint64_t seed_ = 0;
  int slot_ = 0;
};

template <typename T>
T Workspace::ArgForSample(const std::string& name, int sample) const {
  if (!IsArgPerSample(name)) return spec_->Arg<T>(name);
  const TensorListCPU& values = FedValues(name, sample);
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(ReadNumber(values, sample, 0));
  } else {
    using E = typename T::value_type;
    T out;
    const int64_t n = values.shape(sample).num_elements();
    for (int64_t j = 0; j < n; ++j) out.push_back(static_cast<E>(ReadNumber(values, sample, j)));
    return out;
  }
}

// An argument read in a per-sample loop (Setup, PrepareGpu): the constant is looked up and
// converted once when nothing feeds the argument per sample, instead of once per sample (a map
// lookup, a variant copy and a conversion: ~0.2-0.5 us each, for 256 samples and several
// arguments a visible part of an iteration's host time). The reference returned stays valid until
// the next call; not for concurrent use.
template <typename T>
class SampleArg {
 public:
  SampleArg(const Workspace& ws, std::string name)
      : ws_(&ws), name_(std::move(name)), fed_(ws.IsArgPerSample(name_)) {
    if (!fed_) value_ = ws.spec().Arg<T>(name_);
  }
  const T& operator()(int sample) const {
    if (fed_) value_ = ws_->ArgForSample<T>(name_, sample);
    return value_;
  }
  bool fed() const { return fed_; }

 private:
  const Workspace* ws_;
  std::string name_;
  bool fed_;
  mutable T value_{};
};

}  // namespace conveyor
