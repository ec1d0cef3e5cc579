// The consumer side: Pop hands out the oldest iteration's outputs (waiting for its stage), the
// lease returns the slot to the ring on release, recording events on the consumer's streams that
// the slot's next GPU stage waits for (executor.h).
#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/pipeline/executor_state.h"

namespace conveyor {
namespace pipeline_internal {

PipelineOutputs ExecutorState::Pop() {
  std::unique_lock<std::mutex> lock(mu);
  const std::string& name = graph.spec().name;
  if (failed && consumed > failed_iteration) {
    throw Error("pipeline \"" + name + "\": stopped after the error in iteration " +
                std::to_string(failed_iteration) + ": " + failed_message);
  }
  if (consumed >= scheduled) {
    throw InvalidArgument("pipeline \"" + name + "\": Outputs(): no iteration is scheduled; call Run() first");
  }
  const int64_t k = consumed;
  Slot& slot = slots[k % depth];
  if (slot.leased) {
    throw InvalidArgument("pipeline \"" + name + "\": Outputs(): iteration " + std::to_string(k) +
                          " needs prefetch slot " + std::to_string(slot.index) + ", still held by the outputs of "
                          "iteration " + std::to_string(slot.iteration) + "; release them first (prefetch_depth " +
                          std::to_string(depth) + ")");
  }
  Await(lock, [&] { return stop || (slot.iteration == k && slot.done); });
  if (stop) throw Error("pipeline \"" + name + "\": Outputs(): the pipeline is shutting down");
  ++consumed;
  snapshots.erase(snapshots.begin(), snapshots.lower_bound(consumed));
  if (slot.error) {
    std::exception_ptr error = slot.error;
    slot.busy = false;
    lock.unlock();
    Notify();
    std::rethrow_exception(error);
  }
  slot.leased = true;
  PipelineOutputs out;
  out.iteration_ = k;
  out.ready_ = slot.ready;
  for (const GraphOutput& o : graph.outputs()) {
    out.names_.push_back(o.name);
    if (o.device == Device::kGpu) {
      out.lists_.emplace_back(slot.gpu_out[o.node][o.output]);
    } else {
      out.lists_.emplace_back(slot.cpu_out[o.node][o.output]);
    }
    std::visit([&](auto& list) { list.set_ready_event(slot.ready); }, out.lists_.back());
  }
  out.lease_ = std::make_unique<SlotLease>();
  out.lease_->state = shared_from_this();
  out.lease_->slot = slot.index;
  return out;
}

void ExecutorState::Release(int index, const std::vector<StreamView>& streams) noexcept {
  Slot& slot = slots[index];
  int recorded = 0;
  for (StreamView stream : streams) {
    // A consumer stream of ours destroyed before the outputs were released (a Python
    // conveyor.Stream that went out of scope first): its destructor waited for its work, so the
    // slot needs no event from it — and recording on the dead handle crashed (H100, 2026-11-25).
    if (cuda::IsDestroyedStream(stream.get())) continue;
    try {
      if (static_cast<size_t>(recorded) == slot.consumer_done.size()) slot.consumer_done.push_back(cuda::Event::Create());
      slot.consumer_done[recorded].Record(stream);
      ++recorded;
    } catch (...) {
      // Without an event, keep the slot safe the slow way.
      CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream.get()));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    slot.consumer_pending = recorded;
    slot.leased = false;
    slot.busy = false;
  }
  Notify();
}

SlotLease::~SlotLease() { state->Release(slot, streams); }

}  // namespace pipeline_internal

// ---------------------------------------------------------------------------------------------
// PipelineOutputs

PipelineOutputs::~PipelineOutputs() = default;
PipelineOutputs::PipelineOutputs(PipelineOutputs&&) noexcept = default;
PipelineOutputs& PipelineOutputs::operator=(PipelineOutputs&& other) noexcept = default;

int PipelineOutputs::Index(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  std::string known;
  for (const std::string& n : names_) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("PipelineOutputs: no output \"" + name + "\" (outputs: " + known + ")");
}

bool PipelineOutputs::IsGpu(int i) const {
  if (i < 0 || i >= static_cast<int>(lists_.size())) {
    throw InvalidArgument("PipelineOutputs: output " + std::to_string(i) + " out of range (" +
                          std::to_string(lists_.size()) + " outputs" + (lease_ ? "" : ", released") + ")");
  }
  return std::holds_alternative<TensorListGPU>(lists_[i]);
}

const TensorListGPU& PipelineOutputs::Gpu(int i) const {
  if (!IsGpu(i)) throw InvalidArgument("PipelineOutputs: output \"" + names_[i] + "\" is on the host; use Cpu()");
  return std::get<TensorListGPU>(lists_[i]);
}

const TensorListCPU& PipelineOutputs::Cpu(int i) const {
  if (IsGpu(i)) throw InvalidArgument("PipelineOutputs: output \"" + names_[i] + "\" is on the GPU; use Gpu()");
  return std::get<TensorListCPU>(lists_[i]);
}

void PipelineOutputs::WaitOn(StreamView stream) {
  if (!lease_) throw InvalidArgument("PipelineOutputs::WaitOn: the outputs were released");
  if (!ready_) return;
  ready_->Wait(stream);
  auto& streams = lease_->streams;
  if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
}

void PipelineOutputs::Sync() const {
  if (ready_) ready_->Synchronize();
}

void PipelineOutputs::Release() {
  lists_.clear();
  lease_.reset();
}

}  // namespace conveyor
