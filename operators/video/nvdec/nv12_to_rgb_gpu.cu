#include <cuda_runtime.h>

#include "operators/video/nvdec/nv12_to_rgb_gpu.h"
#include "operators/video/nvdec/nv12_to_rgb_pixel.h"

namespace conveyor::ops::video {
namespace {

__global__ void Nv12ToRgbKernel(Nv12Planes planes, YuvToRgb m, uint8_t* rgb) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= planes.width || y >= planes.height) return;
  nv12::Pixel(planes, m, x, y, rgb + (static_cast<size_t>(y) * planes.width + x) * 3);
}

std::string ErrorText(cudaError_t e, const char* call) {
  return std::string(call) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string Nv12ToRgbGpu(const Nv12Planes& planes, const YuvToRgb& m, uint8_t* rgb, void* stream) {
  if (planes.width <= 0 || planes.height <= 0) return "";
  const dim3 block(32, 8);
  const dim3 grid((planes.width + 31) / 32, (planes.height + 7) / 8);
  Nv12ToRgbKernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(planes, m, rgb);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : ErrorText(e, "nv12_to_rgb launch");
}

int RuntimeDevice(std::string* why) {
  int device = -1;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // creates (retains) the primary context
  if (e != cudaSuccess) {
    if (why != nullptr) *why = ErrorText(e, "cudaGetDevice/cudaFree(0)");
    return -1;
  }
  return device;
}

StreamFence::StreamFence() {
  cudaEvent_t e = nullptr;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess) event_ = e;
}

StreamFence::~StreamFence() {
  if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

std::string StreamFence::Wait(void* stream) {
  if (event_ == nullptr) {
    const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? "" : ErrorText(e, "cudaStreamSynchronize");
  }
  cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) e = cudaEventSynchronize(static_cast<cudaEvent_t>(event_));
  return e == cudaSuccess ? "" : ErrorText(e, "cudaEventRecord/cudaEventSynchronize");
}

}  // namespace conveyor::ops::video
