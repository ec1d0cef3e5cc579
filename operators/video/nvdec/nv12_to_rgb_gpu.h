// The NV12 / P016 → RGB kernel (matrices and formula: nv12_to_rgb.h). Free of CUDA headers so the
// NVDEC decoder (which includes the codec headers' own driver types) can call it.
#pragma once

#include <cstdint>
#include <string>

#include "operators/video/nvdec/nv12_to_rgb.h"

namespace conveyor::ops::video {

// Queues the conversion of `planes` (device memory) into `rgb` (device, height x width x 3 bytes)
// on `stream` (a cudaStream_t). Returns "" or the launch error's text.
std::string Nv12ToRgbGpu(const Nv12Planes& planes, const YuvToRgb& m, uint8_t* rgb, void* stream);

// The CUDA runtime's current device, its primary context made current (cudaFree(0)): the device
// NVDEC must decode on so its context is the runtime's. -1 and `why` on failure.
int RuntimeDevice(std::string* why);

// An event to wait for the work queued so far on a stream (NVDEC surfaces may be unmapped only
// once the kernel reading them finished). Host-blocking; cheap (one per decoder).
class StreamFence {
 public:
  StreamFence();
  ~StreamFence();
  StreamFence(const StreamFence&) = delete;
  StreamFence& operator=(const StreamFence&) = delete;
  // Records on `stream` and waits for it. Returns "" or the error's text.
  std::string Wait(void* stream);

 private:
  void* event_ = nullptr;
};

}  // namespace conveyor::ops::video
