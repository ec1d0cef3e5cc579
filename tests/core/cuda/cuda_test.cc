#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/graph.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::cuda {
namespace {

using ::testing::HasSubstr;

TEST(CudaCheck, ThrowsWithCallTextNameAndLocation) {
  // Evaluated exactly once, even though the macro mentions it in the message.
  int calls = 0;
  auto failing = [&] {
    ++calls;
    return cudaErrorInvalidValue;
  };
  try {
    CONVEYOR_CUDA_CHECK(failing());
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    EXPECT_THAT(e.what(), HasSubstr("failing()"));
    EXPECT_THAT(e.what(), HasSubstr("cudaErrorInvalidValue"));
    EXPECT_THAT(e.what(), HasSubstr("cuda_test.cc:"));
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
  }
  EXPECT_EQ(calls, 1);
}

TEST(CudaCheck, SuccessDoesNotThrow) { EXPECT_NO_THROW(CONVEYOR_CUDA_CHECK(cudaSuccess)); }

TEST(CudaCheck, NoThrowVariantOnlyReports) {
  EXPECT_NO_THROW(CONVEYOR_CUDA_CHECK_NOTHROW(cudaErrorInvalidValue));
  EXPECT_NO_THROW(CONVEYOR_CUDA_CHECK_NOTHROW(cudaErrorCudartUnloading));
}

TEST(StreamView, RejectsNullHandle) {
  cudaStream_t null_stream = nullptr;
  try {
    StreamView v(null_stream);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("legacy default stream"));
  }
  static_assert(!std::is_constructible_v<StreamView, std::nullptr_t>);
  static_assert(!std::is_constructible_v<StreamView, int>);
  static_assert(!std::is_copy_constructible_v<Stream>);
  static_assert(std::is_move_constructible_v<Stream>);
}

TEST(InteropStream, DecodesSpecCodes) {
  EXPECT_FALSE(DecodeInteropStream(-1).has_value());
  EXPECT_TRUE(DecodeInteropStream(1)->is_legacy());
  EXPECT_TRUE(DecodeInteropStream(2)->is_per_thread());
  const int64_t handle = 0x7f00dead0000;
  EXPECT_EQ(EncodeInteropStream(*DecodeInteropStream(handle)), handle);
  EXPECT_EQ(EncodeInteropStream(StreamView::Legacy()), 1);
  EXPECT_EQ(EncodeInteropStream(StreamView::PerThread()), 2);
}

TEST(InteropStream, RejectsZeroAndNegatives) {
  EXPECT_THAT([] { DecodeInteropStream(0); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("got 0, which the DLPack")));
  EXPECT_THAT([] { DecodeInteropStream(-7); },
              ::testing::ThrowsMessage<InteropError>(HasSubstr("negative value -7")));
}

TEST(Device, HasCudaDeviceNeverThrows) {
  bool has = false;
  EXPECT_NO_THROW(has = HasCudaDevice());
  EXPECT_EQ(has, DeviceCount() > 0);
  if (!has) {
    EXPECT_FALSE(NoDeviceReason().empty());
  }
}

TEST(StreamGpu, CreateIsNonBlockingAndRuns) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  unsigned flags = 0;
  CONVEYOR_CUDA_CHECK(cudaStreamGetFlags(s.get(), &flags));
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
  Stream moved = std::move(s);
  EXPECT_FALSE(static_cast<bool>(s));
  EXPECT_TRUE(moved.view().Query());
}

TEST(EventGpu, OrdersOneStreamAfterAnother) {
  CONVEYOR_REQUIRE_GPU();
  Stream producer = Stream::Create();
  Stream consumer = Stream::Create();
  const size_t n = 1 << 20;
  Buffer in = Buffer::Allocate(MemoryKind::kPinned, n * sizeof(float));
  Buffer mid = Buffer::Allocate(MemoryKind::kDevice, n * sizeof(float), producer.view());
  Buffer out = Buffer::Allocate(MemoryKind::kPinned, n * sizeof(float));
  auto values = testing::RandomVector<float>(n, -10.f, 10.f);
  std::copy(values.begin(), values.end(), static_cast<float*>(in.host_ptr()));
  std::fill_n(static_cast<float*>(out.host_ptr()), n, -1e30f);
  // The producer is slowed down so a missing wait would read stale data.
  testing::SpinGpu(20, producer.view());
  testing::ScaleAddGpu(static_cast<float*>(mid.device_ptr()), static_cast<const float*>(in.device_ptr()),
                       2.f, 1.f, n, producer.view());
  Event ready = Event::Create();
  ready.Record(producer.view());
  ready.Wait(consumer.view());
  testing::ScaleAddGpu(static_cast<float*>(out.device_ptr()), static_cast<const float*>(mid.device_ptr()),
                       1.f, 0.5f, n, consumer.view());
  consumer.Synchronize();
  EXPECT_TRUE(ready.Query());
  const float* o = static_cast<const float*>(out.host_ptr());
  for (size_t i = 0; i < n; i += 997) ASSERT_FLOAT_EQ(o[i], values[i] * 2.f + 1.5f) << i;
  mid.set_release_stream(consumer.view());
}

TEST(GraphGpu, CaptureAndReplayReadsNewInputs) {
  CONVEYOR_REQUIRE_GPU();
  Stream s = Stream::Create();
  const size_t n = 4096;
  Buffer in = Buffer::Allocate(MemoryKind::kPinned, n * sizeof(float));
  Buffer out = Buffer::Allocate(MemoryKind::kPinned, n * sizeof(float));
  Graph::BeginCapture(s.view());
  testing::ScaleAddGpu(static_cast<float*>(out.device_ptr()), static_cast<const float*>(in.device_ptr()),
                       3.f, -1.f, n, s.view());
  Graph g = Graph::EndCapture(s.view());
  EXPECT_EQ(g.NodeCount(), 1u);
  GraphExec exec = g.Instantiate();
  for (int round = 0; round < 3; ++round) {
    auto values = testing::RandomVector<float>(n, -5.f, 5.f);
    std::copy(values.begin(), values.end(), static_cast<float*>(in.host_ptr()));
    exec.Launch(s.view());
    s.Synchronize();
    const float* o = static_cast<const float*>(out.host_ptr());
    for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(o[i], values[i] * 3.f - 1.f);
  }
}

TEST(DeviceGuardGpu, RestoresPreviousDevice) {
  CONVEYOR_REQUIRE_GPU();
  const int before = CurrentDevice();
  {
    DeviceGuard guard(DeviceCount() - 1);
    EXPECT_EQ(CurrentDevice(), DeviceCount() - 1);
  }
  EXPECT_EQ(CurrentDevice(), before);
  EXPECT_FALSE(DeviceName(before).empty());
}

}  // namespace
}  // namespace conveyor::cuda
