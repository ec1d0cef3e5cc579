// The C API with real device memory: the demonstrator op, stream ordering across import, op and
// export, pinned memory read through its mapped address, and deferred release. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/interop/dlpack_abi.h"
#include "core/memory/buffer.h"
#include "tests/core/interop/dlpack_producer.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::capi {
namespace {

using conveyor::testing::RandomVector;
using conveyor::testing::SpinGpu;
using cuda::Stream;
using interop::testing::DLPackProducer;

constexpr int64_t kN = 1 << 16;
constexpr double kSpinMs = 200;

struct Handle {
  conveyor_tensor_t t = nullptr;
  ~Handle() { conveyor_tensor_release(t); }
};

int64_t Code(const Stream& s) { return cuda::EncodeInteropStream(s.view()); }

void* DataOf(conveyor_tensor_t t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t, &info), CONVEYOR_OK) << conveyor_last_error();
  return info.data;
}

// A device tensor of kN floats, poisoned with NaN on `stream` (stream-ordered allocation).
Handle PoisonedDevice(const Stream& stream) {
  Handle h;
  const int64_t shape[] = {kN};
  EXPECT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CUDA, cuda::CurrentDevice(),
                                  Code(stream), &h.t),
            CONVEYOR_OK)
      << conveyor_last_error();
  CONVEYOR_CUDA_CHECK(cudaMemsetAsync(DataOf(h.t), 0xFF, kN * sizeof(float), stream.get()));
  return h;
}

std::vector<float> ReadBack(const void* device, size_t n, const Stream& stream) {
  std::vector<float> out(n, -12345.f);
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(out.data(), device, n * sizeof(float), cudaMemcpyDefault, stream.get()));
  stream.Synchronize();
  return out;
}

// Random floats in a device buffer, imported through DLPack (the producer counts deleter calls).
struct DeviceInput {
  std::vector<float> host;
  Buffer buffer;
  DLPackProducer producer;
  Handle handle;

  explicit DeviceInput(const Stream& stream, std::vector<int64_t> shape = {kN}, std::vector<int64_t> strides = {})
      : host(RandomVector<float>(kN, -10.f, 10.f)) {
    buffer = Buffer::Allocate(MemoryKind::kDevice, kN * sizeof(float), stream.view());
    CONVEYOR_CUDA_CHECK(
        cudaMemcpyAsync(buffer.data(), host.data(), kN * sizeof(float), cudaMemcpyDefault, stream.get()));
    stream.Synchronize();
    producer.data = buffer.data();
    producer.device = {dlpack::kDLCUDA, cuda::CurrentDevice()};
    producer.shape = std::move(shape);
    producer.strides = std::move(strides);
    EXPECT_EQ(conveyor_tensor_from_dlpack_versioned(
                  reinterpret_cast<DLManagedTensorVersioned*>(producer.Versioned()), -1, &handle.t),
              CONVEYOR_OK)
        << conveyor_last_error();
  }
};

void ExpectScaleAdd(const std::vector<float>& got, const std::vector<float>& in, float a, float b) {
  ASSERT_EQ(got.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) ASSERT_FLOAT_EQ(got[i], a * in[i] + b) << "at " << i;
}

TEST(CApiGpu, ScaleAddThenExportOrdersTheConsumer) {
  CONVEYOR_REQUIRE_GPU();
  Stream ours = Stream::Create();
  Stream consumer = Stream::Create();
  DeviceInput in(ours);
  Handle out = PoisonedDevice(ours);
  // Warm-up: the first launch of a lazily loaded kernel may wait for the device to go idle, which
  // would hide whether export itself blocks.
  ASSERT_EQ(conveyor_scale_add(out.t, in.handle.t, 1.f, 0.f, Code(ours)), CONVEYOR_OK) << conveyor_last_error();
  ours.Synchronize();
  SpinGpu(kSpinMs, ours.view());  // the op's result is late: only an event wait makes it visible
  ASSERT_EQ(conveyor_scale_add(out.t, in.handle.t, 2.f, -3.f, Code(ours)), CONVEYOR_OK) << conveyor_last_error();

  DLManagedTensorVersioned* exported = nullptr;
  ASSERT_EQ(conveyor_tensor_to_dlpack_versioned(out.t, Code(consumer), &exported), CONVEYOR_OK);
  auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(exported);
  EXPECT_EQ(m->dl_tensor.device.device_type, dlpack::kDLCUDA);
  EXPECT_EQ(m->dl_tensor.data, DataOf(out.t)) << "zero-copy";
  EXPECT_FALSE(ours.view().Query()) << "export must not block the host";
  ExpectScaleAdd(ReadBack(m->dl_tensor.data, kN, consumer), in.host, 2.f, -3.f);
  conveyor_dlpack_versioned_delete(exported);
}

TEST(CApiGpu, CaiProducerStreamIsWaitedForByTheOp) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream ours = Stream::Create();
  DeviceInput source(producer);
  Buffer staged = Buffer::Allocate(MemoryKind::kDevice, kN * sizeof(float), producer.view());
  CONVEYOR_CUDA_CHECK(cudaMemsetAsync(staged.data(), 0xFF, kN * sizeof(float), producer.get()));
  SpinGpu(kSpinMs, producer.view());
  // The producer's data appears late on its own stream.
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(staged.data(), source.buffer.data(), kN * sizeof(float),
                                      cudaMemcpyDeviceToDevice, producer.get()));
  const int64_t shape[] = {kN};
  conveyor_cai_t cai{};
  cai.version = 3;
  cai.ndim = 1;
  cai.shape = shape;
  cai.typestr = "<f4";
  cai.data = reinterpret_cast<uintptr_t>(staged.data());
  cai.has_stream = 1;
  cai.stream = Code(producer);
  Handle in;
  ASSERT_EQ(conveyor_tensor_from_cai(&cai, nullptr, nullptr, &in.t), CONVEYOR_OK) << conveyor_last_error();
  Handle out = PoisonedDevice(ours);
  ASSERT_EQ(conveyor_scale_add(out.t, in.t, 0.5f, 1.f, Code(ours)), CONVEYOR_OK) << conveyor_last_error();
  ExpectScaleAdd(ReadBack(DataOf(out.t), kN, ours), source.host, 0.5f, 1.f);
}

TEST(CApiGpu, ReleasingDuringTheKernelDefersTheProducersDeleter) {
  CONVEYOR_REQUIRE_GPU();
  Stream ours = Stream::Create();
  auto in = std::make_unique<DeviceInput>(ours);
  Handle out = PoisonedDevice(ours);
  SpinGpu(kSpinMs, ours.view());
  ASSERT_EQ(conveyor_scale_add(out.t, in->handle.t, 1.f, 1.f, Code(ours)), CONVEYOR_OK);
  conveyor_tensor_release(std::exchange(in->handle.t, nullptr));
  EXPECT_EQ(in->producer.deleter_calls, 0) << "the kernel still reads the producer's memory";
  conveyor_stream_t sync = nullptr;
  ASSERT_EQ(conveyor_stream_create(cuda::CurrentDevice(), &sync), CONVEYOR_OK);
  ours.Synchronize();
  ASSERT_EQ(conveyor_stream_synchronize(sync), CONVEYOR_OK);  // also sweeps deferred releases
  conveyor_stream_destroy(sync);
  EXPECT_EQ(in->producer.deleter_calls, 1);
  ExpectScaleAdd(ReadBack(DataOf(out.t), kN, ours), in->host, 1.f, 1.f);
}

TEST(CApiGpu, PinnedTensorsAreReadThroughTheMappedAddress) {
  CONVEYOR_REQUIRE_GPU();
  Stream ours = Stream::Create();
  const std::vector<float> host = RandomVector<float>(kN, -10.f, 10.f);
  const int64_t shape[] = {kN};
  Handle pinned;
  ASSERT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CUDA_HOST, 0, -1, &pinned.t),
            CONVEYOR_OK)
      << conveyor_last_error();
  conveyor_tensor_info_t info{};
  ASSERT_EQ(conveyor_tensor_info(pinned.t, &info), CONVEYOR_OK);
  EXPECT_EQ(info.device_type, CONVEYOR_DEVICE_CUDA_HOST);
  std::memcpy(info.data, host.data(), kN * sizeof(float));  // a host address
  Handle out = PoisonedDevice(ours);
  ASSERT_EQ(conveyor_scale_add(out.t, pinned.t, -2.f, 0.25f, Code(ours)), CONVEYOR_OK) << conveyor_last_error();
  ExpectScaleAdd(ReadBack(DataOf(out.t), kN, ours), host, -2.f, 0.25f);

  conveyor_cai_t cai{};
  ASSERT_EQ(conveyor_tensor_to_cai(pinned.t, Code(ours), &cai), CONVEYOR_OK) << conveyor_last_error();
  void* mapped = nullptr;
  CONVEYOR_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, info.data, 0));
  EXPECT_EQ(cai.data, reinterpret_cast<uintptr_t>(mapped));
}

TEST(CApiGpu, StridedInputIsReadInLogicalOrder) {
  CONVEYOR_REQUIRE_GPU();
  Stream ours = Stream::Create();
  constexpr int64_t kRows = 256, kCols = kN / kRows;
  DeviceInput in(ours, {kCols, kRows}, {1, kCols});  // the transpose of a (kRows, kCols) array
  Handle out;
  const int64_t shape[] = {kCols, kRows};
  ASSERT_EQ(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CUDA, cuda::CurrentDevice(),
                                  Code(ours), &out.t),
            CONVEYOR_OK);
  CONVEYOR_CUDA_CHECK(cudaMemsetAsync(DataOf(out.t), 0xFF, kN * sizeof(float), ours.get()));
  ASSERT_EQ(conveyor_scale_add(out.t, in.handle.t, 3.f, 0.f, Code(ours)), CONVEYOR_OK) << conveyor_last_error();
  const std::vector<float> got = ReadBack(DataOf(out.t), kN, ours);
  for (int64_t i = 0; i < kCols; ++i) {
    for (int64_t j = 0; j < kRows; ++j) {
      ASSERT_FLOAT_EQ(got[i * kRows + j], 3.f * in.host[j * kCols + i]) << i << "," << j;
    }
  }
}

TEST(CApiGpu, CaiExportAdvertisesOurStream) {
  CONVEYOR_REQUIRE_GPU();
  Stream ours = Stream::Create();
  Handle out = PoisonedDevice(ours);
  conveyor_cai_t cai{};
  ASSERT_EQ(conveyor_tensor_to_cai(out.t, Code(ours), &cai), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(cai.version, 3);
  EXPECT_STREQ(cai.typestr, "<f4");
  EXPECT_EQ(cai.ndim, 1);
  EXPECT_EQ(cai.shape[0], kN);
  EXPECT_EQ(cai.strides[0], 4);
  EXPECT_EQ(cai.data, reinterpret_cast<uintptr_t>(DataOf(out.t)));
  EXPECT_EQ(cai.has_stream, 1);
  EXPECT_EQ(cai.stream, Code(ours));
  ours.Synchronize();
}

}  // namespace
}  // namespace conveyor::capi
