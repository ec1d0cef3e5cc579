#include "core/op/harness.h"

#include <cstring>

#include "core/cuda/check.h"
#include "core/error.h"
#include "core/op/tbb_thread_pool.h"
#include "core/tensor/copy.h"

namespace conveyor {

OpHarness::OpHarness(OpSpec spec, Device device, int batch_size, OpRegistry& registry)
    : spec_(std::move(spec)), device_(device), batch_size_(batch_size) {
  const OpRegistry::Entry& entry = registry.Get(spec_.op());
  spec_.set_device(device == Device::kGpu ? DeviceRequest::kGpu : DeviceRequest::kCpu);
  spec_.Validate();  // SpecError also when the op lacks `device`
  op_ = entry.factory(spec_);
  inputs_.resize(spec_.inputs().size());  // validated: the schema's count, or within its repeat range
  staged_.resize(spec_.inputs().size());
  outputs_.resize(spec_.outputs().size());  // validated: the schema's count
  device_to_host_ = entry.schema.device_to_host();
  for (size_t k = 0; k < spec_.inputs().size(); ++k) {
    host_placed_.push_back(entry.schema.InputAt(k).placement == Placement::kHost);
  }
  pool_ = std::make_unique<TbbThreadPool>(2);
}

OpHarness::~OpHarness() = default;

void OpHarness::set_num_threads(int num_threads) { pool_ = std::make_unique<TbbThreadPool>(num_threads); }

void OpHarness::SetInput(int i, TensorListCPU input) {
  batch_size_ = input.num_samples();
  inputs_.at(static_cast<size_t>(i)) = Slot{std::move(input), std::nullopt};
}

void OpHarness::SetInput(int i, TensorListGPU input) {
  batch_size_ = input.num_samples();
  inputs_.at(static_cast<size_t>(i)) = Slot{std::nullopt, std::move(input)};
}

void OpHarness::SetArgInput(const std::string& arg, TensorListCPU values) { arg_inputs_[arg] = std::move(values); }

void OpHarness::Run(std::optional<StreamView> stream) {
  const bool gpu = device_ == Device::kGpu;
  if (gpu && !stream) throw InvalidArgument(spec_.Describe() + ": a GPU run needs a stream");
  stream_ = stream;
  ws_ = std::make_unique<Workspace>(spec_, batch_size_);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Slot& in = inputs_[i];
    if (!in.cpu && !in.gpu) throw InvalidArgument(spec_.Describe() + ": input " + std::to_string(i) + " not set");
    if (in.gpu) {
      in.gpu->WaitReady(*stream_);
      ws_->AddInput(*in.gpu);
    } else if (gpu && !host_placed_[i]) {
      // What the executor's staging does: one H2D copy on the stream.
      staged_[i].emplace();
      CopyAsync(*staged_[i], *in.cpu, *stream_);
      staged_[i]->set_layout(in.cpu->layout());
      ws_->AddInput(*staged_[i]);
    } else {
      ws_->AddInput(*in.cpu);
    }
  }
  for (const auto& [arg, values] : arg_inputs_) ws_->SetArgInput(arg, values);
  if (stream_) ws_->set_stream(*stream_);
  ws_->set_thread_pool(pool_.get());
  ws_->set_iteration(iteration_);
  ws_->set_seed(seed_);

  descs_ = op_->Setup(*ws_);
  if (descs_.size() != outputs_.size()) {
    throw InvalidArgument(spec_.Describe() + ": Setup returned " + std::to_string(descs_.size()) +
                          " descriptors for " + std::to_string(outputs_.size()) + " outputs");
  }
  for (size_t j = 0; j < outputs_.size(); ++j) {
    const OutputDesc& d = descs_[j];
    Slot& out = outputs_[j];
    if (gpu && !device_to_host_) {
      out = Slot{std::nullopt, TensorListGPU()};
      out.gpu->Resize(d.shapes, d.dtype, *stream_);
      out.gpu->set_layout(d.layout);
      if (out.gpu->nbytes() > 0) {
        CONVEYOR_CUDA_CHECK(cudaMemsetAsync(out.gpu->buffer().device_ptr(), kPoison, out.gpu->nbytes(), stream_->get()));
      }
      ws_->AddOutput(*out.gpu);
    } else {
      out = Slot{TensorListCPU(), std::nullopt};
      // A GPU transfer op writes host outputs asynchronously: they must be pinned.
      out.cpu->Resize(d.shapes, d.dtype, std::nullopt, gpu ? MemoryKind::kPinned : MemoryKind::kHost);
      out.cpu->set_layout(d.layout);
      if (out.cpu->nbytes() > 0) std::memset(out.cpu->buffer().host_ptr(), kPoison, out.cpu->nbytes());
      ws_->AddOutput(*out.cpu);
    }
  }
  if (gpu) {
    op_->PrepareGpu(*ws_);
    op_->RunGpu(*ws_);
  } else {
    op_->RunCpu(*ws_);
  }
}

const TensorListGPU& OpHarness::OutputGpu(int i) const {
  const Slot& s = outputs_.at(static_cast<size_t>(i));
  if (!s.gpu) throw InvalidArgument(spec_.Describe() + ": output " + std::to_string(i) + " is not on the device");
  return *s.gpu;
}

const TensorListCPU& OpHarness::OutputCpu(int i) const {
  const Slot& s = outputs_.at(static_cast<size_t>(i));
  if (!s.cpu) throw InvalidArgument(spec_.Describe() + ": output " + std::to_string(i) + " is not on the host");
  return *s.cpu;
}

TensorListCPU OpHarness::OutputToHost(int i) {
  const Slot& s = outputs_.at(static_cast<size_t>(i));
  if (s.gpu) {
    TensorListCPU host;
    CopyAsync(host, *s.gpu, *stream_);
    stream_->Synchronize();
    host.set_layout(s.gpu->layout());
    return host;
  }
  if (stream_) stream_->Synchronize();
  return OutputCpu(i);
}

}  // namespace conveyor
