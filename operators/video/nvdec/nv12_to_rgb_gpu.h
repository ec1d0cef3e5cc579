// The NV12 / P016 → RGB kernel (matrices and formula: nv12_to_rgb.h). Free of CUDA headers so the
// NVDEC decoder (which includes the codec headers' own driver types) can call it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "operators/video/nvdec/nv12_to_rgb.h"

namespace conveyor::ops::video {

// Queues the conversion of `planes` (device memory) into `rgb` (device, height x width x 3 bytes)
// on `stream` (a cudaStream_t). Returns "" or the launch error's text.
std::string Nv12ToRgbGpu(const Nv12Planes& planes, const YuvToRgb& m, uint8_t* rgb, void* stream);

// The CUDA runtime's current device, its primary context made current (cudaFree(0)): the device
// NVDEC must decode on so its context is the runtime's. -1 and `why` on failure.
int RuntimeDevice(std::string* why);

// The stream one NVDEC session maps and converts its frames on (created once with the session,
// never the pipeline's stream shared by every decoding thread: a host wait on a shared stream waits
// for every thread's queued frames, which serialises the decoders). Not thread-safe: one session,
// one thread at a time.
//
//   caller's stream ──After: record `entry`, own stream waits on it (the output buffer is free)
//   own stream      ──map post-processing → RGB kernel ──Wait: record `done`, host waits on it
//                     (the surface may be unmapped only once the kernel read it)
//
// Every frame is waited for before Output returns, so the caller's stream needs no event back: its
// later work reads finished frames.
class OutputStream {
 public:
  // Null and `why` filled when the stream or its events cannot be created.
  static std::unique_ptr<OutputStream> Create(std::string* why);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  void* get() const { return stream_; }  // a cudaStream_t
  // Orders this stream after the work queued so far on `caller` (a cudaStream_t; null: nothing to
  // wait for). Never blocks the host. Returns "" or the error's text.
  std::string After(void* caller);
  // Blocks the host until the work queued so far on this stream finished. Returns "" or the error.
  std::string Wait();

 private:
  OutputStream() = default;
  void* stream_ = nullptr;
  void* entry_ = nullptr;
  void* done_ = nullptr;
};

}  // namespace conveyor::ops::video
