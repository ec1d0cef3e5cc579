// NvjpegAllocators, called the way nvJPEG calls them (through the structs' function pointers and
// context): device memory comes from our device pool with the slack added (the pool's own
// counters grow by at least size + slack, and a kernel-free memset over the whole padded size is
// in bounds — compute-sanitizer memcheck checks that in the bundle's sweep), the per-handle
// counts follow allocations and frees, slack off asks for the size alone, pinned memory from the
// pinned pool is counted too.
#include <gtest/gtest.h>

#include <cstring>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/stats.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"
#include "tests/util/gpu_test.h"

namespace conveyor::nvjpeg {
namespace {

TEST(NvjpegAllocators, DeviceMemoryWithSlackFromOurPoolCountedPerHandle) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  for (const bool slack : {true, false}) {
    SCOPED_TRACE(slack ? "slack on" : "slack off");
    NvjpegAllocators a(slack);
    const size_t extra = slack ? kDeviceSlack : 0;
    EXPECT_EQ(a.slack(), extra);
    nvjpegDevAllocatorV2_t* dev = a.device();
    const int64_t pool_before = MemoryStats::Get(MemoryKind::kDevice).current_bytes;

    void* p1 = nullptr;
    void* p2 = nullptr;
    ASSERT_EQ(dev->dev_malloc(dev->dev_ctx, &p1, 1000, stream.get()), 0);
    ASSERT_EQ(dev->dev_malloc(dev->dev_ctx, &p2, 300000, stream.get()), 0);
    ASSERT_NE(p1, nullptr);
    ASSERT_NE(p2, nullptr);
    const int64_t pool_grew = MemoryStats::Get(MemoryKind::kDevice).current_bytes - pool_before;
    EXPECT_GE(pool_grew, static_cast<int64_t>(1000 + 300000 + 2 * extra));
    if (!slack) {
      EXPECT_LT(pool_grew, static_cast<int64_t>(1000 + 300000 + kDeviceSlack));
    }
    // The whole padded size is ours: nvJPEG's reads past its size land here.
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(p1, 0x5A, 1000 + extra, stream.get()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(p2, 0x5A, 300000 + extra, stream.get()));

    NvjpegMemory m = a.memory();
    EXPECT_EQ(m.device_allocations, 2);
    EXPECT_EQ(m.device_bytes, 301000);
    EXPECT_EQ(m.device_slack_bytes, static_cast<int64_t>(2 * extra));
    EXPECT_GE(m.device_peak_bytes, static_cast<int64_t>(301000 + 2 * extra));

    ASSERT_EQ(dev->dev_free(dev->dev_ctx, p1, 1000, stream.get()), 0);
    m = a.memory();
    EXPECT_EQ(m.device_allocations, 1);
    EXPECT_EQ(m.device_bytes, 300000);
    EXPECT_EQ(m.device_slack_bytes, static_cast<int64_t>(extra));
    EXPECT_GE(m.device_peak_bytes, static_cast<int64_t>(301000 + 2 * extra));  // the peak stays
    ASSERT_EQ(dev->dev_free(dev->dev_ctx, p2, 300000, stream.get()), 0);
    EXPECT_EQ(a.memory().device_allocations, 0);
    EXPECT_EQ(a.memory().device_bytes, 0);
    stream.Synchronize();
    EXPECT_EQ(MemoryStats::Get(MemoryKind::kDevice).current_bytes, pool_before);
  }
}

TEST(NvjpegAllocators, PinnedMemoryFromOurPoolCounted) {
  CONVEYOR_REQUIRE_GPU();
  NvjpegAllocators a(true);
  nvjpegPinnedAllocatorV2_t* pin = a.pinned();
  void* p = nullptr;
  ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &p, 4096, nullptr), 0);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x3C, 4096);  // host memory, writable from the host
  EXPECT_EQ(a.memory().pinned_allocations, 1);
  EXPECT_EQ(a.memory().pinned_bytes, 4096);
  EXPECT_EQ(a.memory().device_allocations, 0);
  // Zero bytes (nvJPEG asks for them) still give a distinct, freeable block.
  void* z = nullptr;
  ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &z, 0, nullptr), 0);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(a.memory().pinned_allocations, 2);
  ASSERT_EQ(pin->pinned_free(pin->pinned_ctx, z, 0, nullptr), 0);
  ASSERT_EQ(pin->pinned_free(pin->pinned_ctx, p, 4096, nullptr), 0);
  EXPECT_EQ(a.memory().pinned_allocations, 0);
  EXPECT_EQ(a.memory().pinned_bytes, 0);
}

// With a pinned high water, a request is rounded up to the largest so far (within the cap) and
// freed at the rounded size although nvJPEG passes its own size to the free.
TEST(NvjpegAllocators, PinnedHighWaterRoundsUpToTheLargestSoFar) {
  CONVEYOR_REQUIRE_GPU();
  const int64_t pool_before = MemoryStats::Get(MemoryKind::kPinned).current_bytes;
  {
    NvjpegAllocators a(true);
    a.set_pinned_high_water_cap(size_t{2} << 20);
    nvjpegPinnedAllocatorV2_t* pin = a.pinned();
    void *big = nullptr, *small = nullptr, *huge = nullptr;
    ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &big, size_t{1} << 20, nullptr), 0);
    ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &small, 4096, nullptr), 0);
    EXPECT_EQ(a.memory().pinned_bytes, int64_t{2} << 20) << "4096 bytes rounded up to the 1 MiB seen before";
    std::memset(small, 0x5A, size_t{1} << 20);  // all of it ours
    ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &huge, size_t{3} << 20, nullptr), 0);
    void* after = nullptr;
    ASSERT_EQ(pin->pinned_malloc(pin->pinned_ctx, &after, 100, nullptr), 0);
    EXPECT_EQ(a.memory().pinned_bytes, (int64_t{1} << 20) * 2 + (int64_t{3} << 20) + (int64_t{2} << 20))
        << "after a 3 MiB request, 100 bytes take the 2 MiB cap";
    for (auto [p, size] : {std::pair{big, size_t{1} << 20}, std::pair{small, size_t{4096}},
                           std::pair{huge, size_t{3} << 20}, std::pair{after, size_t{100}}}) {
      ASSERT_EQ(pin->pinned_free(pin->pinned_ctx, p, size, nullptr), 0);
    }
    EXPECT_EQ(a.memory().pinned_allocations, 0);
    EXPECT_EQ(a.memory().pinned_bytes, 0);
  }
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kPinned).current_bytes, pool_before) << "every block back at its size";
}

// The pool cannot serve an impossible size: the callback says so (non-zero), it does not throw
// into nvJPEG, and nothing is counted.
TEST(NvjpegAllocators, FailedAllocationReturnsNonZeroAndCountsNothing) {
  CONVEYOR_REQUIRE_GPU();
  if (::conveyor::testing::UnderComputeSanitizer()) {
    GTEST_SKIP() << "compute-sanitizer reports the deliberate cudaErrorMemoryAllocation as an API error";
  }
  NvjpegAllocators a(true);
  nvjpegDevAllocatorV2_t* dev = a.device();
  void* p = nullptr;
  EXPECT_NE(dev->dev_malloc(dev->dev_ctx, &p, size_t{1} << 50, nullptr), 0);
  EXPECT_EQ(a.memory().device_allocations, 0);
  EXPECT_EQ(a.memory().device_bytes, 0);
}

}  // namespace
}  // namespace conveyor::nvjpeg
