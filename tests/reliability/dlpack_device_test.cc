// conveyor_tensor_to_dlpack[_versioned]_on: the consumer names the device it wants (DLPack's
// __dlpack__(dl_device=...)). Pinned memory asked for as (kDLCPU, 0) is exported as kDLCPU after
// a host wait for its pending GPU writes; anything else than where the data lives is refused.
// The CPU-tensor cases run anywhere; the pinned ones skip without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/cuda/stream.h"
#include "core/interop/dlpack_abi.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Handle {
  conveyor_tensor_t t = nullptr;
  ~Handle() { conveyor_tensor_release(t); }
};

Handle Empty(int64_t n, int32_t device_type) {
  Handle h;
  const int64_t shape[] = {n};
  EXPECT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_FLOAT32, device_type, 0, -1, &h.t), CONVEYOR_OK)
      << conveyor_last_error();
  return h;
}

float* DataOf(conveyor_tensor_t t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t, &info), CONVEYOR_OK) << conveyor_last_error();
  return static_cast<float*>(info.data);
}

// Both export forms of `t` for (device_type, device_id): the DLPack device each reports.
std::vector<dlpack::DLDevice> ExportBoth(conveyor_tensor_t t, int32_t device_type, int32_t device_id,
                                         int64_t stream = -1) {
  std::vector<dlpack::DLDevice> devices;
  DLManagedTensorVersioned* v = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack_versioned_on(t, stream, device_type, device_id, &v), CONVEYOR_OK)
      << conveyor_last_error();
  if (v != nullptr) {
    auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(v);
    devices.push_back(m->dl_tensor.device);
    EXPECT_EQ(m->dl_tensor.data, DataOf(t));
    conveyor_dlpack_versioned_delete(v);
  }
  DLManagedTensor* l = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack_on(t, stream, device_type, device_id, &l), CONVEYOR_OK) << conveyor_last_error();
  if (l != nullptr) {
    auto* m = reinterpret_cast<dlpack::DLManagedTensor*>(l);
    devices.push_back(m->dl_tensor.device);
    EXPECT_EQ(m->dl_tensor.data, DataOf(t));
    conveyor_dlpack_delete(l);
  }
  return devices;
}

std::string RefusalOf(conveyor_tensor_t t, int32_t device_type, int32_t device_id, int64_t stream = -1) {
  DLManagedTensorVersioned* v = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack_versioned_on(t, stream, device_type, device_id, &v),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(v, nullptr);
  const std::string versioned = conveyor_last_error();
  DLManagedTensor* l = nullptr;
  EXPECT_EQ(conveyor_tensor_to_dlpack_on(t, stream, device_type, device_id, &l), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(l, nullptr);
  EXPECT_THAT(std::string(conveyor_last_error()), HasSubstr(versioned.substr(versioned.find(": ") + 2)));
  return versioned;
}

TEST(DLPackDevice, CpuTensorExportsToItsOwnDeviceOnly) {
  Handle t = Empty(33, CONVEYOR_DEVICE_CPU);
  for (const dlpack::DLDevice& d : ExportBoth(t.t, CONVEYOR_DEVICE_CPU, 0)) EXPECT_EQ(d.device_type, dlpack::kDLCPU);
  EXPECT_THAT(RefusalOf(t.t, CONVEYOR_DEVICE_CUDA_HOST, 0),
              HasSubstr("conveyor_tensor_to_dlpack_versioned_on: dl_device: expected (1, 0), where the data lives, "
                        "got (3, 0); Conveyor exports without copying"));
  EXPECT_THAT(RefusalOf(t.t, CONVEYOR_DEVICE_CUDA, 0), HasSubstr("got (2, 0)"));
}

TEST(DLPackDevice, PinnedIsExportedAsCpuWhenAskedAndAsPinnedOtherwise) {
  CONVEYOR_REQUIRE_GPU();
  Handle t = Empty(1000, CONVEYOR_DEVICE_CUDA_HOST);
  for (const dlpack::DLDevice& d : ExportBoth(t.t, CONVEYOR_DEVICE_CPU, 0)) {
    EXPECT_EQ(d.device_type, dlpack::kDLCPU);
    EXPECT_EQ(d.device_id, 0);
  }
  for (const dlpack::DLDevice& d : ExportBoth(t.t, CONVEYOR_DEVICE_CUDA_HOST, 0)) {
    EXPECT_EQ(d.device_type, dlpack::kDLCUDAHost);
  }
}

TEST(DLPackDevice, PinnedRefusesOtherDevicesAndAStreamForAHostConsumer) {
  CONVEYOR_REQUIRE_GPU();
  Handle t = Empty(8, CONVEYOR_DEVICE_CUDA_HOST);
  EXPECT_THAT(RefusalOf(t.t, CONVEYOR_DEVICE_CUDA, 0),
              HasSubstr("dl_device: expected (3, 0), where the data lives, or (1, 0) (kDLCPU: pinned memory is host "
                        "memory), got (2, 0)"));
  EXPECT_THAT(RefusalOf(t.t, CONVEYOR_DEVICE_CPU, 1), HasSubstr("got (1, 1)"));
  EXPECT_THAT(RefusalOf(t.t, CONVEYOR_DEVICE_CPU, 0, /*stream=*/1),
              HasSubstr("consumer_stream: expected -1 for a kDLCPU consumer (it reads on the host, with no stream), "
                        "got 1"));
}

// A kernel still writing the pinned tensor when a CPU consumer asks: the export returns only after
// it, so the host reads the finished values.
TEST(DLPackDevice, HostConsumerSeesPendingGpuWritesFinished) {
  CONVEYOR_REQUIRE_GPU();
  CONVEYOR_SKIP_UNDER_SANITIZER();  // launches return only when the spin has finished there
  {
    // Load the kernel's module first: with lazy loading (CUDA 12+ default) the first launch of a
    // kernel may wait for the device to go idle, i.e. for the spin below (seen on the H100).
    Handle a = Empty(1, CONVEYOR_DEVICE_CUDA_HOST), b = Empty(1, CONVEYOR_DEVICE_CUDA_HOST);
    cuda::Stream warm = cuda::Stream::Create();
    ASSERT_EQ(conveyor_scale_add(b.t, a.t, 1.f, 0.f, cuda::EncodeInteropStream(warm.view())), CONVEYOR_OK)
        << conveyor_last_error();
    warm.Synchronize();
  }
  for (int64_t n : {1, 4097, 300000}) {
    SCOPED_TRACE(n);
    Handle in = Empty(n, CONVEYOR_DEVICE_CUDA_HOST);
    Handle out = Empty(n, CONVEYOR_DEVICE_CUDA_HOST);
    const std::vector<float> x = testing::RandomVector<float>(static_cast<size_t>(n), -50.f, 50.f);
    std::memcpy(DataOf(in.t), x.data(), x.size() * sizeof(float));
    std::fill(DataOf(out.t), DataOf(out.t) + n, std::nanf(""));
    cuda::Stream stream = cuda::Stream::Create();
    testing::SpinGpu(150, stream.view());  // the write below starts 150 ms from now
    ASSERT_EQ(conveyor_scale_add(out.t, in.t, 1.5f, 2.f, cuda::EncodeInteropStream(stream.view())), CONVEYOR_OK)
        << conveyor_last_error();
    const auto start = Clock::now();
    DLManagedTensorVersioned* v = nullptr;
    ASSERT_EQ(conveyor_tensor_to_dlpack_versioned_on(out.t, -1, CONVEYOR_DEVICE_CPU, 0, &v), CONVEYOR_OK)
        << conveyor_last_error();
    EXPECT_GT(Clock::now() - start, std::chrono::milliseconds(50)) << "the export did not wait for the kernel";
    auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(v);
    const float* y = static_cast<const float*>(m->dl_tensor.data);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_FLOAT_EQ(y[i], 1.5f * x[static_cast<size_t>(i)] + 2.f) << "element " << i;
    }
    conveyor_dlpack_versioned_delete(v);
  }
}

}  // namespace
}  // namespace conveyor
