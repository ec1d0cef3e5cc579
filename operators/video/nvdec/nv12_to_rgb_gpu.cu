#include <cuda_runtime.h>

#include <memory>

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

std::unique_ptr<OutputStream> OutputStream::Create(std::string* why) {
  std::unique_ptr<OutputStream> s(new OutputStream());
  cudaStream_t stream = nullptr;
  cudaEvent_t entry = nullptr, done = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) s->stream_ = stream;
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&entry, cudaEventDisableTiming);
  if (e == cudaSuccess) s->entry_ = entry;
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  if (e == cudaSuccess) s->done_ = done;
  if (e != cudaSuccess) {
    if (why != nullptr) *why = ErrorText(e, "cudaStreamCreateWithFlags/cudaEventCreateWithFlags");
    return nullptr;  // the destructor frees what was made
  }
  return s;
}

OutputStream::~OutputStream() {
  if (done_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(done_));
  if (entry_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(entry_));
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

std::string OutputStream::After(void* caller) {
  if (caller == nullptr) return "";
  cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(entry_), static_cast<cudaStream_t>(caller));
  if (e == cudaSuccess) {
    e = cudaStreamWaitEvent(static_cast<cudaStream_t>(stream_), static_cast<cudaEvent_t>(entry_), 0);
  }
  return e == cudaSuccess ? "" : ErrorText(e, "cudaEventRecord/cudaStreamWaitEvent");
}

std::string OutputStream::Wait() {
  cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(done_), static_cast<cudaStream_t>(stream_));
  if (e == cudaSuccess) e = cudaEventSynchronize(static_cast<cudaEvent_t>(done_));
  return e == cudaSuccess ? "" : ErrorText(e, "cudaEventRecord/cudaEventSynchronize");
}

}  // namespace conveyor::ops::video
