#include "core/op/workspace.h"

#include <cstring>

#include "core/error.h"

namespace conveyor {

namespace {

template <typename T>
double Load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

}  // namespace

Workspace::Workspace(const OpSpec& spec, int batch_size)
    : spec_(&spec), batch_size_(batch_size), node_id_(NodeId(spec.name())) {}

namespace {
template <typename Want, typename Slots>
Want* Pick(const Slots& slots, int i, const OpSpec& spec, const char* what, const char* backend) {
  if (i < 0 || i >= static_cast<int>(slots.size())) {
    throw InvalidArgument(spec.Describe() + ": " + what + " " + std::to_string(i) + " is out of range (" +
                          std::to_string(slots.size()) + " bound)");
  }
  if (!std::holds_alternative<Want*>(slots[static_cast<size_t>(i)])) {
    throw InvalidArgument(spec.Describe() + ": " + what + " " + std::to_string(i) + " is not on the " + backend);
  }
  return std::get<Want*>(slots[static_cast<size_t>(i)]);
}
}  // namespace

bool Workspace::InputIsGpu(int i) const {
  return std::holds_alternative<const TensorListGPU*>(inputs_.at(static_cast<size_t>(i)));
}
bool Workspace::OutputIsGpu(int i) const {
  return std::holds_alternative<TensorListGPU*>(outputs_.at(static_cast<size_t>(i)));
}
const TensorListCPU& Workspace::InputCpu(int i) const {
  return *Pick<const TensorListCPU>(inputs_, i, *spec_, "input", "host");
}
const TensorListGPU& Workspace::InputGpu(int i) const {
  return *Pick<const TensorListGPU>(inputs_, i, *spec_, "input", "device");
}
TensorListCPU& Workspace::OutputCpu(int i) const { return *Pick<TensorListCPU>(outputs_, i, *spec_, "output", "host"); }
TensorListGPU& Workspace::OutputGpu(int i) const {
  return *Pick<TensorListGPU>(outputs_, i, *spec_, "output", "device");
}

TensorListDesc Workspace::InputDesc(int i) const {
  if (InputIsGpu(i)) {
    const TensorListGPU& in = InputGpu(i);
    return {in.shapes(), in.dtype(), in.layout()};
  }
  const TensorListCPU& in = InputCpu(i);
  return {in.shapes(), in.dtype(), in.layout()};
}

StreamView Workspace::stream() const {
  if (!stream_) {
    throw InvalidArgument(spec_->Describe() + ": no CUDA stream in this workspace (a GPU operator needs one)");
  }
  return *stream_;
}

void Workspace::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  if (thread_pool_ == nullptr) {
    fn(0, n);
    return;
  }
  thread_pool_->ParallelFor(n, grain, fn);
}

void Workspace::RunBeside(const std::function<void()>& a, const std::function<void()>& b) const {
  if (thread_pool_ == nullptr) {
    a();
    b();
    return;
  }
  thread_pool_->RunBeside(a, b);
}

void Workspace::CheckNotPerSample(const std::string& name) const {
  if (IsArgPerSample(name)) {
    throw InvalidArgument(spec_->Describe() + ": argument \"" + name +
                          "\" is fed per sample; read it with ArgForSample or ArgPerSample");
  }
}

const TensorListCPU& Workspace::FedValues(const std::string& name, int sample) const {
  const TensorListCPU& values = *arg_inputs_.at(name);
  if (sample < 0 || sample >= values.num_samples()) {
    throw InvalidArgument(spec_->Describe() + ": argument \"" + name + "\" is fed " +
                          std::to_string(values.num_samples()) + " samples, sample " + std::to_string(sample) +
                          " was asked for");
  }
  if (values.shape(sample).num_elements() < 1) {
    throw InvalidArgument(spec_->Describe() + ": argument \"" + name + "\": sample " + std::to_string(sample) +
                          " of its feed is empty " + values.shape(sample).ToString());
  }
  return values;
}

double Workspace::ReadNumber(const TensorListCPU& values, int sample, int64_t index) {
  const char* p = static_cast<const char*>(values.raw_sample(sample)) + index * static_cast<int64_t>(DTypeSize(values.dtype()));
  switch (values.dtype()) {
    case DType::kBool:
      return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::kUInt8:
      return Load<uint8_t>(p);
    case DType::kInt8:
      return Load<int8_t>(p);
    case DType::kUInt16:
      return Load<uint16_t>(p);
    case DType::kInt16:
      return Load<int16_t>(p);
    case DType::kInt32:
      return Load<int32_t>(p);
    case DType::kInt64:
      return Load<int64_t>(p);
    case DType::kFloat32:
      return Load<float>(p);
    case DType::kFloat64:
      return Load<double>(p);
    case DType::kFloat16:
    case DType::kBFloat16:
      break;
  }
  throw InvalidArgument("per-sample argument values of dtype " + std::string(DTypeName(values.dtype())) +
                        " are not supported; feed bool, integers, float32 or float64");
}

}  // namespace conveyor
