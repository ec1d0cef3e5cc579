// conveyor_smoke: builds a tensor, runs a kernel when a GPU exists, checks the result against the CPU
// and prints what it did. The README's "main job" until the CLI exists.
#include <cmath>
#include <cstdio>
#include <random>

#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/tensor/copy.h"
#include "core/tensor/tensor.h"
#include "tools/smoke_kernel.h"

int main() {
  using namespace conveyor;
  const Shape shape{3, 224, 224};
  TensorCPU host = TensorCPU::Empty(shape, DType::kFloat32, std::nullopt, "CHW");
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(0.f, 255.f);
  float* h = host.mutable_data<float>();
  for (int64_t i = 0; i < host.num_elements(); ++i) h[i] = dist(rng);
  std::printf("built a %s %s tensor %s (%zu bytes) on the host\n", std::string(DTypeName(host.dtype())).c_str(),
              std::string(host.layout().str()).c_str(), shape.ToString().c_str(), host.nbytes());
  if (!cuda::HasCudaDevice()) {
    std::printf("no GPU (%s): skipping the kernel\n", cuda::NoDeviceReason().c_str());
    return 0;
  }
  const float a = 1.f / 255.f, b = -0.5f;
  cuda::Stream stream = cuda::Stream::Create();
  TensorGPU in = TensorGPU::Empty(shape, DType::kFloat32, stream.view());
  TensorGPU out = TensorGPU::Empty(shape, DType::kFloat32, stream.view());
  TensorCPU back = TensorCPU::Empty(shape, DType::kFloat32, std::nullopt, {}, MemoryKind::kPinned);
  CopyAsync(in, host, stream.view());
  tools::AffineGpu(out.mutable_data<float>(), in.data<float>(), a, b, in.num_elements(), stream.view());
  out.RecordReady(stream.view());
  CopyAsync(back, out, stream.view());
  stream.Synchronize();
  double max_err = 0;
  for (int64_t i = 0; i < host.num_elements(); ++i) {
    max_err = std::max(max_err, std::abs(double(back.data<float>()[i]) - (double(h[i]) * a + b)));
  }
  std::printf("ran out = %g * in + %g on %s over %lld elements; max |GPU - CPU| = %.3g\n", a, b,
              cuda::DeviceName(cuda::CurrentDevice()).c_str(), static_cast<long long>(host.num_elements()), max_err);
  return max_err < 1e-5 ? 0 : 1;
}
