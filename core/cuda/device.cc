#include "core/cuda/device.h"

#include <cuda_runtime_api.h>

#include <mutex>

#include "core/cuda/check.h"

namespace conveyor::cuda {
namespace {

struct Probe {
  int count = 0;
  std::string reason;
};

const Probe& GetProbe() {
  static const Probe probe = [] {
    Probe p;
    const cudaError_t status = cudaGetDeviceCount(&p.count);
    if (status != cudaSuccess) {
      cudaGetLastError();
      p.count = 0;
      p.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                 cudaGetErrorString(status) + ")";
    } else if (p.count == 0) {
      p.reason = "the CUDA driver reports no devices";
    }
    return p;
  }();
  return probe;
}

}  // namespace

bool HasCudaDevice() { return GetProbe().count > 0; }
int DeviceCount() { return GetProbe().count; }
std::string NoDeviceReason() { return HasCudaDevice() ? std::string() : GetProbe().reason; }

int CurrentDevice() {
  int d = 0;
  CONVEYOR_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

std::string DeviceName(int device) {
  cudaDeviceProp prop{};
  CONVEYOR_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return prop.name;
}

std::vector<std::string> PciBusIds() {
  std::vector<std::string> ids;
  for (int d = 0; d < DeviceCount(); ++d) {
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof(id), d) == cudaSuccess) {
      ids.emplace_back(id);
    } else {
      cudaGetLastError();
    }
  }
  return ids;
}

DeviceGuard::DeviceGuard(int device) : previous_(CurrentDevice()), switched_(previous_ != device) {
  if (switched_) CONVEYOR_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  if (switched_) CONVEYOR_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_));
}

}  // namespace conveyor::cuda
