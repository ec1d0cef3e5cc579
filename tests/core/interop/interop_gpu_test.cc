// DLPack and CUDA Array Interface with real device memory, streams and events. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/interop/cuda_array_interface.h"
#include "core/interop/dlpack.h"
#include "core/tensor/copy.h"
#include "tests/core/interop/dlpack_producer.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::interop {
namespace {

using ::testing::HasSubstr;
using conveyor::testing::RandomVector;
using conveyor::testing::ScaleAddGpu;
using conveyor::testing::SpinGpu;
using cuda::Stream;
using testing::DLPackProducer;

constexpr size_t kN = 1 << 16;
constexpr double kSpinMs = 200;

// A device buffer holding fresh random floats (written on `stream`).
Buffer RandomDeviceFloats(const std::vector<float>& host, StreamView stream) {
  Buffer b = Buffer::Allocate(MemoryKind::kDevice, host.size() * sizeof(float), stream);
  CopyBytesAsync(b.data(), host.data(), host.size() * sizeof(float), stream);
  return b;
}

// A device buffer full of NaN (0xFF bytes) so unwritten elements show.
Buffer PoisonedDeviceFloats(size_t n, StreamView stream) {
  Buffer b = Buffer::Allocate(MemoryKind::kDevice, n * sizeof(float), stream);
  CONVEYOR_CUDA_CHECK(cudaMemsetAsync(b.data(), 0xFF, n * sizeof(float), stream.get()));
  return b;
}

std::vector<float> ToHost(const void* device, size_t n, StreamView stream) {
  std::vector<float> out(n, -12345.f);
  CopyBytesAsync(out.data(), device, n * sizeof(float), stream);
  stream.Synchronize();
  return out;
}

void ExpectScaleAdd(const std::vector<float>& got, const std::vector<float>& in, float a, float b) {
  ASSERT_EQ(got.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_FLOAT_EQ(got[i], a * in[i] + b) << "at " << i;
  }
}

// out = a * in + b written on `producer` behind a long spin, with out's ready event recorded
// after it: a reader that does not wait on that event sees NaN.
struct PendingScaleAdd {
  std::vector<float> in_host;
  TensorGPU in;
  TensorGPU out;
  float a, b;

  PendingScaleAdd(StreamView producer, float a_, float b_)
      : in_host(RandomVector<float>(kN, -10.f, 10.f)), a(a_), b(b_) {
    in = TensorGPU::FromBuffer(RandomDeviceFloats(in_host, producer), 0, {int64_t{kN}}, DType::kFloat32);
    out = TensorGPU::FromBuffer(PoisonedDeviceFloats(kN, producer), 0, {int64_t{kN}}, DType::kFloat32);
    SpinGpu(kSpinMs, producer);
    ScaleAddGpu(out.mutable_data<float>(), in.data<float>(), a, b, kN, producer);
    out.RecordReady(producer);
  }
  void Expect(const void* device_data, StreamView reader) const {
    ExpectScaleAdd(ToHost(device_data, kN, reader), in_host, a, b);
  }
};

TEST(DLPackGpu, ImportedDeviceTensorFeedsAKernel) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  const std::vector<float> host = RandomVector<float>(kN, -10.f, 10.f);
  Buffer in = RandomDeviceFloats(host, s.view());
  DLPackProducer p;
  p.data = in.data();
  p.device = {dlpack::kDLCUDA, cuda::CurrentDevice()};
  p.shape = {static_cast<int64_t>(kN)};
  {
    TensorGPU t = std::get<TensorGPU>(ImportDLPack(p.Versioned()));
    EXPECT_EQ(t.device(), cuda::CurrentDevice());
    Buffer out = PoisonedDeviceFloats(kN, s.view());
    ScaleAddGpu(static_cast<float*>(out.data()), t.data<float>(), 2.f, 1.f, kN, s.view());
    ExpectScaleAdd(ToHost(out.data(), kN, s.view()), host, 2.f, 1.f);
  }
  EXPECT_EQ(p.deleter_calls, 1);
}

TEST(DLPackGpu, ManagedMemoryImportsAsGpuTensor) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  const std::vector<float> host = RandomVector<float>(kN, -10.f, 10.f);
  Buffer managed = Buffer::Allocate(MemoryKind::kManaged, kN * sizeof(float), s.view());
  CopyBytesAsync(managed.data(), host.data(), kN * sizeof(float), s.view());
  DLPackProducer p;
  p.data = managed.data();
  p.device = {dlpack::kDLCUDAManaged, 0};
  p.shape = {static_cast<int64_t>(kN)};
  TensorGPU t = std::get<TensorGPU>(ImportDLPack(p.Legacy()));
  EXPECT_EQ(t.memory_kind(), MemoryKind::kManaged);
  Buffer out = PoisonedDeviceFloats(kN, s.view());
  ScaleAddGpu(static_cast<float*>(out.data()), t.data<float>(), -1.f, 0.5f, kN, s.view());
  ExpectScaleAdd(ToHost(out.data(), kN, s.view()), host, -1.f, 0.5f);
}

TEST(DLPackGpu, PinnedHostTensorIsReadThroughItsMappedAddress) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  const std::vector<float> host = RandomVector<float>(kN, -10.f, 10.f);
  Buffer pinned = Buffer::Allocate(MemoryKind::kPinned, kN * sizeof(float));
  std::memcpy(pinned.host_ptr(), host.data(), kN * sizeof(float));
  DLPackProducer p;
  p.data = pinned.data();
  p.device = {dlpack::kDLCUDAHost, 0};
  p.shape = {static_cast<int64_t>(kN)};
  AnyTensor imported = ImportDLPack(p.Versioned());
  ASSERT_TRUE(std::holds_alternative<TensorCPU>(imported));
  EXPECT_EQ(BufferOf(imported).kind(), MemoryKind::kPinned);
  TensorGPU view = DeviceView(imported);
  Buffer out = PoisonedDeviceFloats(kN, s.view());
  ScaleAddGpu(static_cast<float*>(out.data()), view.data<float>(), 4.f, -2.f, kN, s.view());
  ExpectScaleAdd(ToHost(out.data(), kN, s.view()), host, 4.f, -2.f);
}

TEST(DLPackGpu, CpuDeviceTypeOnPageLockedMemoryImportsAsPinned) {
  CONVEYOR_REQUIRE_GPU();
  Buffer pinned = Buffer::Allocate(MemoryKind::kPinned, 64);
  DLPackProducer p;
  p.data = pinned.data();
  p.shape = {16};
  EXPECT_EQ(BufferOf(ImportDLPack(p.Versioned())).kind(), MemoryKind::kPinned)
      << "PyTorch exports pinned tensors as kDLCPU";
  std::vector<float> pageable(16, 1.f);
  p.data = pageable.data();
  EXPECT_EQ(BufferOf(ImportDLPack(p.Versioned())).kind(), MemoryKind::kHost);
}

TEST(DLPackGpu, ExportOrdersTheConsumerStreamWithoutBlockingTheHost) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream consumer = Stream::Create();
  PendingScaleAdd pending(producer.view(), 3.f, -1.f);
  dlpack::DLManagedTensorVersioned* m = ExportDLPackVersioned(pending.out, consumer.view());
  EXPECT_FALSE(pending.out.ready_event()->Query()) << "export must not wait on the host";
  // The consumer's read is ordered after the producer's kernel only through the event wait.
  pending.Expect(m->dl_tensor.data, consumer.view());
  m->deleter(m);
}

TEST(DLPackGpu, LegacyExportAlsoOrdersTheConsumerAndKeepsTheDataAlive) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream consumer = Stream::Create();
  PendingScaleAdd pending(producer.view(), 0.5f, 7.f);
  dlpack::DLManagedTensor* m = ExportDLPackLegacy(pending.out, consumer.view());
  pending.out = TensorGPU();  // the export alone keeps the data alive
  pending.Expect(m->dl_tensor.data, consumer.view());
  m->deleter(m);
}

TEST(CaiGpu, ProducerStreamBecomesTheReadyEvent) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream consumer = Stream::Create();
  PendingScaleAdd pending(producer.view(), -3.f, 2.f);
  CudaArrayInterface cai;
  cai.shape = {static_cast<int64_t>(kN)};
  cai.typestr = "<f4";
  cai.data = reinterpret_cast<uintptr_t>(pending.out.raw_data());
  cai.stream = cuda::EncodeInteropStream(producer.view());
  int releases = 0;
  {
    TensorGPU t = ImportCudaArrayInterface(cai, [&] { ++releases; });
    EXPECT_EQ(t.memory_kind(), MemoryKind::kDevice);
    EXPECT_EQ(t.device(), cuda::CurrentDevice());
    ASSERT_NE(t.ready_event(), nullptr);
    EXPECT_FALSE(t.ready_event()->Query()) << "import must not wait on the host";
    t.WaitReady(consumer.view());
    pending.Expect(t.raw_data(), consumer.view());
  }
  EXPECT_EQ(releases, 1);
}

TEST(CaiGpu, LooksUpWhereThePointerLives) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  CudaArrayInterface cai;
  cai.shape = {8};
  cai.typestr = "|u1";
  Buffer device = Buffer::Allocate(MemoryKind::kDevice, 8, s.view());
  cai.data = reinterpret_cast<uintptr_t>(device.data());
  EXPECT_EQ(ImportCudaArrayInterface(cai, nullptr).memory_kind(), MemoryKind::kDevice);
  Buffer pinned = Buffer::Allocate(MemoryKind::kPinned, 8);
  cai.data = reinterpret_cast<uintptr_t>(pinned.device_ptr());
  EXPECT_EQ(ImportCudaArrayInterface(cai, nullptr).memory_kind(), MemoryKind::kPinned);
  std::vector<uint8_t> pageable(8, 1);
  cai.data = reinterpret_cast<uintptr_t>(pageable.data());
  EXPECT_THAT([&] { ImportCudaArrayInterface(cai, nullptr); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("which CUDA does not know")));
  s.Synchronize();
}

TEST(CaiGpu, ExportMakesOurStreamWaitOrSyncsTheHost) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream ours = Stream::Create();
  PendingScaleAdd pending(producer.view(), 1.5f, 0.25f);
  CudaArrayInterface cai = ExportCudaArrayInterface(pending.out, ours.view());
  ASSERT_TRUE(cai.stream.has_value());
  EXPECT_EQ(*cai.stream, cuda::EncodeInteropStream(ours.view()));
  EXPECT_FALSE(pending.out.ready_event()->Query());
  pending.Expect(reinterpret_cast<void*>(cai.data), ours.view());

  SpinGpu(kSpinMs, producer.view());
  pending.out.RecordReady(producer.view());
  CudaArrayInterface no_stream = ExportCudaArrayInterface(pending.out, std::nullopt);
  EXPECT_FALSE(no_stream.stream.has_value());
  EXPECT_TRUE(pending.out.ready_event()->Query()) << "without a stream the host waited";
}

}  // namespace
}  // namespace conveyor::interop
