#include "core/cuda/event.h"

#include "core/cuda/check.h"

namespace conveyor::cuda {

void EventTraits::Destroy(cudaEvent_t event) noexcept {
  CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventDestroy(event));
}

Event Event::Create(bool timing) {
  cudaEvent_t e = nullptr;
  CONVEYOR_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}

void Event::Record(StreamView stream) { CONVEYOR_CUDA_CHECK(cudaEventRecord(handle_.get(), stream.get())); }

void Event::Wait(StreamView stream) const {
  CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), handle_.get(), 0));
}

bool Event::Query() const {
  const cudaError_t status = cudaEventQuery(handle_.get());
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CONVEYOR_CUDA_CHECK(status);
  return true;
}

void Event::Synchronize() const { CONVEYOR_CUDA_CHECK(cudaEventSynchronize(handle_.get())); }

float Event::ElapsedMs(const Event& start, const Event& stop) {
  float ms = 0;
  CONVEYOR_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

}  // namespace conveyor::cuda
