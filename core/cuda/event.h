// Event: a move-only owner of a cudaEvent_t. Timing is off unless asked for (cheaper record/wait).
#pragma once

#include <cuda_runtime_api.h>

#include "core/cuda/handle.h"
#include "core/cuda/stream.h"

namespace conveyor::cuda {

struct EventTraits {
  using Handle = cudaEvent_t;
  static void Destroy(cudaEvent_t event) noexcept;
};

class Event {
 public:
  static Event Create(bool timing = false);

  Event() = default;
  cudaEvent_t get() const& { return handle_.get(); }
  cudaEvent_t get() const&& = delete;
  explicit operator bool() const { return static_cast<bool>(handle_); }

  void Record(StreamView stream);
  // Makes `stream` wait for the last Record, without blocking the host.
  void Wait(StreamView stream) const;
  // True once the recorded work has finished (or nothing was recorded).
  bool Query() const;
  void Synchronize() const;
  // Milliseconds between two timing events that both completed.
  static float ElapsedMs(const Event& start, const Event& stop);

 private:
  explicit Event(cudaEvent_t e) : handle_(e) {}
  UniqueHandle<EventTraits> handle_;
};

}  // namespace conveyor::cuda
