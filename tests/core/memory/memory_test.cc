#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/memory/device_ptr.h"
#include "core/memory/stats.h"
#include "core/memory/virtual_buffer.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;

TEST(DevicePtr, ArithmeticMatchesRawPointers) {
  float storage[64];
  float* raw = storage + 3;
  DevicePtr<float> p(raw);
  EXPECT_EQ((p + 5).get(), raw + 5);
  EXPECT_EQ((5 + p).get(), raw + 5);
  EXPECT_EQ((p - 2).get(), raw - 2);
  DevicePtr<float> q = p;
  q += 10;
  EXPECT_EQ(q - p, 10);
  EXPECT_EQ(p - q, -10);
  q -= 4;
  EXPECT_EQ(q.get(), raw + 6);
  EXPECT_EQ(p[7].get(), raw + 7);
  EXPECT_TRUE(p < q);
  EXPECT_TRUE(p == DevicePtr<float>(raw));
  EXPECT_FALSE(p == q);
  ++q;
  EXPECT_EQ(q.get(), raw + 7);
  --q;
  EXPECT_EQ(q.get(), raw + 6);
}

TEST(DevicePtr, ExplicitConversionsAndAlignment) {
  const unsigned long long cu = 0x7f0000001000ull;
  DevicePtr<uint8_t> p = DevicePtr<uint8_t>::FromAddress(cu);
  EXPECT_EQ(static_cast<unsigned long long>(p), cu);
  EXPECT_EQ(static_cast<uintptr_t>(p + 3), cu + 3);
  EXPECT_EQ(p.alignment(), 4096u);
  EXPECT_EQ((p + 8).alignment(), 8u);
  EXPECT_TRUE((p + 16).is_aligned(16));
  EXPECT_FALSE((p + 17).is_aligned(2));
  DevicePtr<const uint8_t> c = p;  // implicit to const
  EXPECT_EQ(c.address(), p.address());
  static_assert(!std::is_convertible_v<DevicePtr<float>, float*>);
  static_assert(!std::is_convertible_v<unsigned long long, DevicePtr<float>>);
  EXPECT_FALSE(static_cast<bool>(DevicePtr<int>()));
}

TEST(DevicePtr, SpanIsBoundsChecked) {
  auto s = DevicePtr<double>::FromAddress(0x10000).span(4);
  EXPECT_EQ(s.index(3).address(), 0x10000u + 3 * sizeof(double));
  EXPECT_THAT([&] { s.index(4); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("index 4 out of range for 4")));
}

TEST(Buffer, HostAllocationIsUsableAndCounted) {
  const auto before = MemoryStats::Get(MemoryKind::kHost);
  {
    Buffer b = Buffer::Allocate(MemoryKind::kHost, 1000);
    EXPECT_EQ(b.size(), 1000u);
    EXPECT_EQ(b.kind(), MemoryKind::kHost);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.host_ptr()) % Buffer::kDefaultAlignment, 0u);
    auto v = testing::RandomVector<uint8_t>(1000, 1, 255);
    std::memcpy(b.host_ptr(), v.data(), v.size());
    Buffer copy = b;  // shared ownership
    EXPECT_EQ(copy.use_count(), 2);
    EXPECT_EQ(std::memcmp(copy.host_ptr(), v.data(), v.size()), 0);
    EXPECT_EQ(MemoryStats::Get(MemoryKind::kHost).current_bytes, before.current_bytes + 1000);
  }
  const auto after = MemoryStats::Get(MemoryKind::kHost);
  EXPECT_EQ(after.current_bytes, before.current_bytes);
  EXPECT_EQ(after.allocations, before.allocations + 1);
  EXPECT_EQ(after.deallocations, before.deallocations + 1);
  EXPECT_GE(after.peak_bytes, before.current_bytes + 1000);
}

TEST(Buffer, HostMemoryRefusesDevicePointer) {
  Buffer b = Buffer::Allocate(MemoryKind::kHost, 16);
  EXPECT_THAT([&] { b.device_ptr(); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("got pageable host memory")));
}

TEST(Buffer, WrapReleasesOwnerExactlyOnceWhenLastCopyDies) {
  int releases = 0;
  std::vector<int> data(8, 7);
  {
    std::shared_ptr<void> owner(nullptr, [&](void*) { ++releases; });
    Buffer a = Buffer::Wrap(data.data(), 32, MemoryKind::kHost, -1, std::move(owner));
    Buffer b = a;
    { Buffer c = b; }
    EXPECT_EQ(releases, 0);
    a = Buffer();
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
}

TEST(Buffer, WrapRejectsNullWithBytes) {
  EXPECT_THAT([] { Buffer::Wrap(nullptr, 4, MemoryKind::kDevice, 0, nullptr); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("expected a non-null pointer for 4 bytes")));
}

// The design's central promise: a pinned buffer passes to a kernel exactly like a device buffer.
TEST(BufferGpu, SameKernelPathForDeviceAndPinned) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  const size_t n = (1 << 18) + 3;
  auto values = testing::RandomVector<float>(n, -100.f, 100.f);
  Buffer host_in = Buffer::Allocate(MemoryKind::kPinned, n * sizeof(float));
  std::memcpy(host_in.host_ptr(), values.data(), n * sizeof(float));
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinned, MemoryKind::kManaged}) {
    SCOPED_TRACE(std::string(MemoryKindName(kind)));
    Buffer out = Buffer::Allocate(kind, n * sizeof(float), stream.view());
    testing::ScaleAddGpu(static_cast<float*>(out.device_ptr()), static_cast<const float*>(host_in.device_ptr()),
                         -0.5f, 2.f, n, stream.view());
    std::vector<float> result(n, -1e30f);
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(result.data(), out.device_ptr(), n * sizeof(float), cudaMemcpyDefault,
                                        stream.get()));
    stream.Synchronize();
    for (size_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(result[i], values[i] * -0.5f + 2.f) << i;
  }
}

// A buffer may outlive the stream it was allocated on; releasing it must not touch the dead handle.
TEST(BufferGpu, OutlivesItsStream) {
  CONVEYOR_REQUIRE_GPU();
  Buffer device, pinned;
  cudaStream_t handle = nullptr;
  {
    cuda::Stream s = cuda::Stream::Create();
    handle = s.get();
    device = Buffer::Allocate(MemoryKind::kDevice, 1 << 20, s.view());
    pinned = Buffer::Allocate(MemoryKind::kPinned, 1 << 20, s.view());
    testing::IotaGpu(static_cast<uint32_t*>(device.device_ptr()), 3, (1 << 20) / 4, s.view());
    testing::SpinGpu(20, s.view());
    EXPECT_FALSE(cuda::IsDestroyedStream(handle));
  }  // the stream's destructor waits for the spin, then destroys it
  EXPECT_TRUE(cuda::IsDestroyedStream(handle));
  uint32_t last = 0;
  CONVEYOR_CUDA_CHECK(cudaMemcpy(&last, static_cast<char*>(device.device_ptr()) + (1 << 20) - 4, 4,
                                 cudaMemcpyDeviceToHost));
  EXPECT_EQ(last, 3u + (1 << 20) / 4 - 1);
  device = Buffer();
  pinned = Buffer();
  // The pools still work afterwards.
  cuda::Stream t = cuda::Stream::Create();
  Buffer again = Buffer::Allocate(MemoryKind::kDevice, 1 << 20, t.view());
  testing::IotaGpu(static_cast<uint32_t*>(again.device_ptr()), 9, 16, t.view());
  t.Synchronize();
  CONVEYOR_CUDA_CHECK(cudaMemcpy(&last, again.device_ptr(), 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(last, 9u);
}

TEST(MemoryResourceGpu, DevicePoolReusesMemoryInSteadyState) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  // Warm up: the pool takes memory from the driver once.
  { Buffer warm = Buffer::Allocate(MemoryKind::kDevice, 8 << 20, stream.view()); }
  const auto before = MemoryStats::Get(MemoryKind::kDevice);
  for (int i = 0; i < 50; ++i) {
    Buffer b = Buffer::Allocate(MemoryKind::kDevice, 8 << 20, stream.view());
    testing::IotaGpu(static_cast<uint32_t*>(b.device_ptr()), static_cast<uint32_t>(i), (8 << 20) / 4, stream.view());
  }
  stream.Synchronize();
  const auto after = MemoryStats::Get(MemoryKind::kDevice);
  EXPECT_EQ(after.allocations, before.allocations + 50);
  EXPECT_EQ(after.upstream_allocations, before.upstream_allocations);
  EXPECT_EQ(after.current_bytes, before.current_bytes);
}

TEST(MemoryResourceGpu, PinnedPoolReusesBlockOnlyAfterItsStreamWorkFinished) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  const size_t bytes = 1 << 20;
  void* first = nullptr;
  {
    Buffer b = Buffer::Allocate(MemoryKind::kPinned, bytes, stream.view());
    first = b.host_ptr();
    testing::SpinGpu(100, stream.view());  // the block stays busy on the stream for a while
  }
  // Still in flight: a fresh block must be handed out instead of the busy one.
  Buffer second = Buffer::Allocate(MemoryKind::kPinned, bytes, stream.view());
  EXPECT_NE(second.host_ptr(), first);
  stream.Synchronize();
  const auto before = MemoryStats::Get(MemoryKind::kPinned);
  Buffer third = Buffer::Allocate(MemoryKind::kPinned, bytes, stream.view());
  EXPECT_EQ(third.host_ptr(), first);  // finished: reused, no new pinning
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kPinned).upstream_allocations, before.upstream_allocations);
}

TEST(MemoryResourceGpu, ConcurrentAllocationsAreThreadSafe) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      cuda::Stream s = cuda::Stream::Create();
      for (int i = 0; i < 100; ++i) {
        Buffer d = Buffer::Allocate(MemoryKind::kDevice, 4096 * (t + 1), s.view());
        Buffer p = Buffer::Allocate(MemoryKind::kPinned, 4096 * (i % 5 + 1), s.view());
        if (d.device_ptr() == nullptr || p.device_ptr() == nullptr) ++errors;
      }
      s.Synchronize();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(VirtualBufferGpu, GrowsWithoutMovingAndKeepsData) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  VirtualBuffer vb = VirtualBuffer::Create(size_t(1) << 30, 1);
  const size_t g = vb.granularity();
  ASSERT_GT(g, 0u);
  EXPECT_EQ(vb.reserved_bytes() % g, 0u);
  const auto base = vb.base();
  EXPECT_EQ(vb.mapped_bytes(), g);
  // Write the first chunk, then grow several times, writing across each chunk boundary.
  size_t written = vb.mapped_bytes() / 4;
  testing::IotaGpu(reinterpret_cast<uint32_t*>(base.get()), 1000, written, stream.view());
  for (int step = 0; step < 4; ++step) {
    const size_t old_bytes = vb.mapped_bytes();
    vb.Grow(old_bytes + g / 2);  // not a multiple of the granularity: rounds up
    EXPECT_EQ(vb.base(), base) << "the base address moved at step " << step;
    EXPECT_GT(vb.mapped_bytes(), old_bytes);
    // A kernel writes a range straddling the old end of the mapping.
    const size_t from = old_bytes / 4 - 1000, count = 2000;
    testing::IotaGpu(reinterpret_cast<uint32_t*>(base.get()) + from, static_cast<uint32_t>(7 * step), count,
                     stream.view());
    stream.Synchronize();
    std::vector<uint32_t> got(count);
    CONVEYOR_CUDA_CHECK(cudaMemcpy(got.data(), (base + static_cast<ptrdiff_t>(from * 4)).get(), count * 4,
                                   cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(got[i], 7u * step + i) << "step " << step << " i " << i;
  }
  EXPECT_GE(vb.chunk_count(), 4u);
  // Data written before any growth is intact (except where step 0 overwrote it near the boundary).
  std::vector<uint32_t> head(1000);
  CONVEYOR_CUDA_CHECK(cudaMemcpy(head.data(), base.get(), head.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < head.size(); ++i) ASSERT_EQ(head[i], 1000u + i);
  // A Buffer view keeps the whole reservation alive after the VirtualBuffer is gone.
  Buffer view = vb.AsBuffer();
  vb = VirtualBuffer();
  testing::IotaGpu(static_cast<uint32_t*>(view.device_ptr()), 5, view.size() / 4, stream.view());
  stream.Synchronize();
  uint32_t last = 0;
  CONVEYOR_CUDA_CHECK(cudaMemcpy(&last, static_cast<char*>(view.device_ptr()) + view.size() - 4, 4,
                                 cudaMemcpyDeviceToHost));
  EXPECT_EQ(last, 5u + view.size() / 4 - 1);
}

TEST(VirtualBufferGpu, GrowBeyondReservationThrows) {
  CONVEYOR_REQUIRE_GPU();
  VirtualBuffer vb = VirtualBuffer::Create(1);
  EXPECT_THAT([&] { vb.Grow(vb.reserved_bytes() + 1); },
              ::testing::ThrowsMessage<OutOfMemory>(HasSubstr("were reserved")));
}

TEST(VirtualBuffer, CreateRejectsBadSizes) {
  EXPECT_THAT([] { VirtualBuffer::Create(0); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("expected max_bytes > 0")));
  EXPECT_THAT([] { VirtualBuffer::Create(10, 20); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("initial_bytes 20 exceeds max_bytes 10")));
}

}  // namespace
}  // namespace conveyor
