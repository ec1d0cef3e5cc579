#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/memory/memory_resource.h"

namespace conveyor::nvjpeg {
namespace {

constexpr size_t kAlignment = 256;

std::optional<StreamView> ViewOf(cudaStream_t s) {
  if (s == nullptr) return std::nullopt;
  return StreamView(s);
}

NvjpegAllocators& Self(void* ctx) { return *static_cast<NvjpegAllocators*>(ctx); }

thread_local ThreadAllocTally tally;

// Adds one allocator call (malloc or free) and its time to this thread's tally when it ends.
class Tallied {
 public:
  explicit Tallied(bool device) : device_(device), start_(std::chrono::steady_clock::now()) {}
  ~Tallied() {
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    if (device_) {
      ++tally.device_calls;
      tally.device_ns += ns;
    } else {
      ++tally.pinned_calls;
      tally.pinned_ns += ns;
    }
  }
  Tallied(const Tallied&) = delete;
  Tallied& operator=(const Tallied&) = delete;

 private:
  bool device_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

ThreadAllocTally ThisThreadAllocTally() { return tally; }

NvjpegAllocators::NvjpegAllocators(bool device_slack)
    : slack_(device_slack ? kDeviceSlack : 0),
      device_{&NvjpegAllocators::DevMalloc, &NvjpegAllocators::DevFree, this},
      pinned_{&NvjpegAllocators::PinnedMalloc, &NvjpegAllocators::PinnedFree, this} {}

NvjpegMemory NvjpegAllocators::memory() const {
  NvjpegMemory m;
  m.device_allocations = dev_allocs_.load(std::memory_order_relaxed);
  m.device_bytes = dev_bytes_.load(std::memory_order_relaxed);
  m.device_slack_bytes = m.device_allocations * static_cast<int64_t>(slack_);
  m.device_peak_bytes = dev_peak_.load(std::memory_order_relaxed);
  m.pinned_allocations = pin_allocs_.load(std::memory_order_relaxed);
  m.pinned_bytes = pin_bytes_.load(std::memory_order_relaxed);
  return m;
}

// nvJPEG's allocator callbacks return 0 on success; an exception must not cross into nvJPEG.
int NvjpegAllocators::DevMalloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  const Tallied tallied(true);
  NvjpegAllocators& a = Self(ctx);
  try {
    *ptr = DefaultResource(MemoryKind::kDevice).Allocate(size + a.slack_, kAlignment, ViewOf(stream));
  } catch (...) {
    return 1;
  }
  a.dev_allocs_.fetch_add(1, std::memory_order_relaxed);
  const int64_t held = a.dev_bytes_.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed) +
                       static_cast<int64_t>(size) +
                       a.dev_allocs_.load(std::memory_order_relaxed) * static_cast<int64_t>(a.slack_);
  int64_t peak = a.dev_peak_.load(std::memory_order_relaxed);
  while (held > peak && !a.dev_peak_.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
  return 0;
}

int NvjpegAllocators::DevFree(void* ctx, void* ptr, size_t size, cudaStream_t stream) {
  const Tallied tallied(true);
  NvjpegAllocators& a = Self(ctx);
  DefaultResource(MemoryKind::kDevice).Deallocate(ptr, size + a.slack_, kAlignment, ViewOf(stream));
  a.dev_allocs_.fetch_sub(1, std::memory_order_relaxed);
  a.dev_bytes_.fetch_sub(static_cast<int64_t>(size), std::memory_order_relaxed);
  return 0;
}

int NvjpegAllocators::PinnedMalloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  const Tallied tallied(false);
  NvjpegAllocators& a = Self(ctx);
  size_t n = std::max<size_t>(size, 1);
  if (a.pin_cap_ > 0) {
    size_t high = a.pin_high_.load(std::memory_order_relaxed);
    while (n > high && !a.pin_high_.compare_exchange_weak(high, n, std::memory_order_relaxed)) {
    }
    n = std::max(n, std::min(high, a.pin_cap_));
  }
  try {
    *ptr = DefaultResource(MemoryKind::kPinned).Allocate(n, kAlignment, ViewOf(stream));
    if (n != std::max<size_t>(size, 1)) {
      std::lock_guard<std::mutex> lock(a.pin_mu_);
      a.pin_rounded_[*ptr] = n;
    }
  } catch (...) {
    return 1;
  }
  a.pin_allocs_.fetch_add(1, std::memory_order_relaxed);
  a.pin_bytes_.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
  return 0;
}

int NvjpegAllocators::PinnedFree(void* ctx, void* ptr, size_t size, cudaStream_t stream) {
  const Tallied tallied(false);
  NvjpegAllocators& a = Self(ctx);
  size_t n = std::max<size_t>(size, 1);
  if (a.pin_cap_ > 0) {
    std::lock_guard<std::mutex> lock(a.pin_mu_);
    const auto it = a.pin_rounded_.find(ptr);
    if (it != a.pin_rounded_.end()) {
      n = it->second;
      a.pin_rounded_.erase(it);
    }
  }
  DefaultResource(MemoryKind::kPinned).Deallocate(ptr, n, kAlignment, ViewOf(stream));
  a.pin_allocs_.fetch_sub(1, std::memory_order_relaxed);
  a.pin_bytes_.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
  return 0;
}

}  // namespace conveyor::nvjpeg
