// Device queries and DeviceGuard.
#pragma once

#include <string>
#include <vector>

namespace conveyor::cuda {

// False (never throws) on machines without a driver, without a device, or with a broken driver.
bool HasCudaDevice();
int DeviceCount();  // 0 where HasCudaDevice() is false
int CurrentDevice();
std::string DeviceName(int device);
// The visible devices' PCI addresses as cudaDeviceGetPCIBusId gives them ("0000:00:06.0"); empty
// where HasCudaDevice() is false.
std::vector<std::string> PciBusIds();
// Why HasCudaDevice() is false ("no CUDA driver", "cudaGetDeviceCount: ..."), for skip messages.
std::string NoDeviceReason();

// Makes `device` current for its lifetime and restores the previous device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_;
  bool switched_;
};

}  // namespace conveyor::cuda
