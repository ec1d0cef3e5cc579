// OpHarness: runs one operator without the executor — builds its Workspace, calls Setup,
// allocates outputs from the descriptors (poisoned, so unwritten elements show), calls
// RunCpu/RunGpu. For operator tests, the conformance suite and kernel benchmarks.
//
//   OpHarness h(OpSpec("cast", "c").SetArg("dtype", DType::kFloat16).AddInput("x").AddOutput("y"),
//               Device::kGpu);
//   h.SetInput(0, host_batch);       // uploaded on the stream for a GPU operator
//   h.Run(stream.view());
//   TensorListCPU y = h.OutputToHost(0);
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/registry.h"
#include "core/op/thread_pool.h"
#include "core/op/workspace.h"

namespace conveyor {

class OpHarness {
 public:
  // Sets the spec's device, validates it (SpecError, also when the op lacks that backend) and
  // instantiates the operator from `registry`.
  OpHarness(OpSpec spec, Device device, int batch_size = 1, OpRegistry& registry = OpRegistry::Global());
  ~OpHarness();

  // Input i, given on the host. A GPU operator reading it on the device (Placement::kOpDevice)
  // gets a device copy made on the stream passed to Run. Sets the batch size to its samples.
  void SetInput(int i, TensorListCPU input);
  // Input i given on the device as is (its ready event is waited on by the run's stream).
  void SetInput(int i, TensorListGPU input);
  void SetArgInput(const std::string& arg, TensorListCPU values);
  void set_batch_size(int batch_size) { batch_size_ = batch_size; }
  void set_iteration(int64_t iteration) { iteration_ = iteration; }
  void set_seed(uint64_t seed) { seed_ = seed; }
  void set_num_threads(int num_threads);

  // One iteration. A GPU operator needs `stream` (InvalidArgument otherwise); the run is
  // asynchronous on it — OutputToHost synchronizes.
  void Run(std::optional<StreamView> stream = std::nullopt);

  const OutputDescs& descs() const { return descs_; }
  // Output i as host data (a copy on the run's stream, then a stream sync, for GPU outputs).
  TensorListCPU OutputToHost(int i);
  const TensorListGPU& OutputGpu(int i) const;
  const TensorListCPU& OutputCpu(int i) const;
  Operator& op() { return *op_; }
  const Workspace& workspace() const { return *ws_; }

  // The byte every output is filled with before a run.
  static constexpr uint8_t kPoison = 0xA5;

 private:
  struct Slot {
    std::optional<TensorListCPU> cpu;
    std::optional<TensorListGPU> gpu;
  };

  OpSpec spec_;
  Device device_;
  int batch_size_;
  int64_t iteration_ = 0;
  uint64_t seed_ = 1234;
  std::unique_ptr<Operator> op_;
  std::unique_ptr<CpuThreadPool> pool_;
  std::vector<Slot> inputs_;
  std::vector<std::optional<TensorListGPU>> staged_;  // device copies of host inputs
  std::vector<bool> host_placed_;                       // Placement::kHost per input
  bool device_to_host_ = false;
  std::vector<Slot> outputs_;
  std::map<std::string, TensorListCPU> arg_inputs_;
  std::unique_ptr<Workspace> ws_;
  OutputDescs descs_;
  std::optional<StreamView> stream_;
};

// Makes a host batch from per-sample shapes and values (row-major), for tests.
template <typename T>
TensorListCPU MakeBatch(const std::vector<Shape>& shapes, const std::vector<std::vector<T>>& values,
                        Layout layout = {}) {
  TensorListCPU list;
  list.Resize(shapes, DTypeOf<T>::value);
  list.set_layout(std::move(layout));
  for (size_t i = 0; i < shapes.size(); ++i) {
    T* dst = static_cast<T*>(list.raw_sample(static_cast<int>(i)));
    for (size_t j = 0; j < values[i].size(); ++j) dst[j] = values[i][j];
  }
  return list;
}

}  // namespace conveyor
