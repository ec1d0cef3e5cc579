#include "core/memory/memory_resource.h"

#include <cuda_runtime_api.h>

#include <bit>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/error.h"
#include "core/memory/stats.h"

namespace conveyor {
namespace {

// Returns pooled memory to the driver at exit. Registered after the first CUDA allocation, i.e. after
// cudart initialised, so (atexit being LIFO) it runs before cudart tears its context down; this is
// what lets compute-sanitizer's leak check come back clean.
void ReleasePoolsAtExit();
void RegisterExitCleanup() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(ReleasePoolsAtExit); });
}

std::string Describe(size_t bytes, MemoryKind kind, int device) {
  std::string s = std::to_string(bytes) + " bytes of " + std::string(MemoryKindName(kind)) + " memory";
  if (device >= 0) s += " on device " + std::to_string(device);
  return s;
}

class HostResource final : public MemoryResource {
 public:
  MemoryKind kind() const override { return MemoryKind::kHost; }
  int device() const override { return -1; }
  void* Allocate(size_t bytes, size_t alignment, std::optional<StreamView>) override {
    void* p = ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t(alignment), std::nothrow);
    if (p == nullptr) throw OutOfMemory("failed to allocate " + Describe(bytes, kind(), -1));
    MemoryStats::OnUpstream(kind(), bytes);
    MemoryStats::OnAllocate(kind(), bytes);
    return p;
  }
  void Deallocate(void* p, size_t bytes, size_t alignment, std::optional<StreamView>) noexcept override {
    ::operator delete(p, std::align_val_t(alignment));
    MemoryStats::OnDeallocate(kind(), bytes);
  }
};

// Size classes are powers of two from 4 KiB; a freed block waits on the event recorded on the
// stream that last used it before it is handed out again.
class PinnedPoolResource final : public MemoryResource {
 public:
  MemoryKind kind() const override { return MemoryKind::kPinned; }
  int device() const override { return -1; }

  void* Allocate(size_t bytes, size_t alignment, std::optional<StreamView> stream) override {
    const size_t cls = ClassSize(bytes);
    {
      std::lock_guard lock(mutex_);
      auto& list = free_[cls];
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].pending || list[i].pending->Query()) {
          FreeBlock block = std::move(list[i]);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          if (block.pending) spare_events_.push_back(std::move(*block.pending));
          MemoryStats::OnAllocate(kind(), cls);
          return block.ptr;
        }
      }
    }
    (void)stream;
    (void)alignment;  // cudaHostAlloc returns page-aligned memory, more than any alignment we take
    void* p = nullptr;
    const cudaError_t status = cudaHostAlloc(&p, cls, cudaHostAllocMapped | cudaHostAllocPortable);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemory("cudaHostAlloc could not pin " + Describe(cls, kind(), -1));
    }
    CONVEYOR_CUDA_CHECK(status);
    RegisterExitCleanup();
    MemoryStats::OnUpstream(kind(), cls);
    MemoryStats::OnAllocate(kind(), cls);
    return p;
  }

  void Deallocate(void* p, size_t bytes, size_t, std::optional<StreamView> stream) noexcept override {
    const size_t cls = ClassSize(bytes);
    MemoryStats::OnDeallocate(kind(), cls);
    std::lock_guard lock(mutex_);
    FreeBlock block{p, std::nullopt};
    if (stream) {
      try {
        cuda::Event e;
        if (!spare_events_.empty()) {
          e = std::move(spare_events_.back());
          spare_events_.pop_back();
        } else {
          e = cuda::Event::Create();
        }
        e.Record(*stream);
        block.pending = std::move(e);
      } catch (const std::exception&) {
        // The stream is unusable (e.g. sticky error); the block is parked until Trim syncs it.
        block.pending = std::nullopt;
      }
    }
    free_[cls].push_back(std::move(block));
  }

  void Trim() {
    std::lock_guard lock(mutex_);
    for (auto& [cls, list] : free_) {
      for (auto& block : list) {
        if (block.pending) CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventSynchronize(block.pending->get()));
        CONVEYOR_CUDA_CHECK_NOTHROW(cudaFreeHost(block.ptr));
      }
      list.clear();
    }
  }

  // Deliberately leaked at exit (see DefaultResource): the driver frees pinned memory with the
  // context, and freeing it during static destruction races cudart's own teardown.

 private:
  static size_t ClassSize(size_t bytes) {
    constexpr size_t kMin = 4096;
    return bytes <= kMin ? kMin : std::bit_ceil(bytes);
  }
  struct FreeBlock {
    void* ptr;
    std::optional<cuda::Event> pending;
  };
  std::mutex mutex_;
  std::map<size_t, std::vector<FreeBlock>> free_;
  std::vector<cuda::Event> spare_events_;
};

class DevicePoolResource final : public MemoryResource {
 public:
  explicit DevicePoolResource(int device) : device_(device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CONVEYOR_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    // Keep freed memory in the pool: returning it would make the next iteration call into the driver.
    uint64_t threshold = UINT64_MAX;
    CONVEYOR_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
    // Stream-less calls order on a private non-blocking stream: the per-thread default stream
    // would serialise them behind the legacy default stream (other libraries' work, a user's
    // cudaMemcpy), and `std::nullopt` promises that no stream work touches the memory anyway.
    {
      cuda::DeviceGuard guard(device_);
      CONVEYOR_CUDA_CHECK(cudaStreamCreateWithFlags(&unordered_, cudaStreamNonBlocking));
    }
    RegisterExitCleanup();
  }
  // Memory still allocated from the pool is released by the driver once it is freed.
  ~DevicePoolResource() override { CONVEYOR_CUDA_CHECK_NOTHROW(cudaMemPoolDestroy(pool_)); }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  int device() const override { return device_; }

  void* Allocate(size_t bytes, size_t alignment, std::optional<StreamView> stream) override {
    (void)alignment;  // pool allocations are at least 256-byte aligned
    const cudaStream_t s = stream ? stream->get() : unordered_;
    cuda::DeviceGuard guard(device_);
    void* p = nullptr;
    const cudaError_t status = cudaMallocFromPoolAsync(&p, bytes == 0 ? 1 : bytes, pool_, s);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemory("cudaMallocFromPoolAsync could not allocate " + Describe(bytes, kind(), device_));
    }
    CONVEYOR_CUDA_CHECK(status);
    if (!stream) CONVEYOR_CUDA_CHECK(cudaStreamSynchronize(s));
    uint64_t reserved = 0;
    CONVEYOR_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved));
    {
      std::lock_guard lock(mutex_);
      if (reserved > reserved_) {
        MemoryStats::OnUpstream(kind(), reserved - reserved_);
        reserved_ = reserved;
      }
    }
    MemoryStats::OnAllocate(kind(), bytes);
    return p;
  }

  void Deallocate(void* p, size_t bytes, size_t, std::optional<StreamView> stream) noexcept override {
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaFreeAsync(p, stream ? stream->get() : unordered_));
    MemoryStats::OnDeallocate(kind(), bytes);
  }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
  cudaStream_t unordered_ = nullptr;  // for calls without a stream; lives as long as the process
  std::mutex mutex_;
  uint64_t reserved_ = 0;
};

class ManagedResource final : public MemoryResource {
 public:
  explicit ManagedResource(int device) : device_(device) {}
  MemoryKind kind() const override { return MemoryKind::kManaged; }
  int device() const override { return device_; }
  void* Allocate(size_t bytes, size_t, std::optional<StreamView>) override {
    cuda::DeviceGuard guard(device_);
    void* p = nullptr;
    const cudaError_t status = cudaMallocManaged(&p, bytes == 0 ? 1 : bytes, cudaMemAttachGlobal);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemory("cudaMallocManaged could not allocate " + Describe(bytes, kind(), device_));
    }
    CONVEYOR_CUDA_CHECK(status);
    MemoryStats::OnUpstream(kind(), bytes);
    MemoryStats::OnAllocate(kind(), bytes);
    return p;
  }
  void Deallocate(void* p, size_t bytes, size_t, std::optional<StreamView>) noexcept override {
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaFree(p));  // cudaFree waits for all work that may use it
    MemoryStats::OnDeallocate(kind(), bytes);
  }

 private:
  int device_;
};

std::mutex& DeviceResourcesMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

std::map<std::pair<int, int>, std::unique_ptr<MemoryResource>>& DeviceResources() {
  static auto* resources = new std::map<std::pair<int, int>, std::unique_ptr<MemoryResource>>();
  return *resources;
}

PinnedPoolResource& PinnedPool() {
  // Leaked on purpose: resources must outlive every static Buffer, and cudart tears down first.
  static auto* pool = new PinnedPoolResource();
  return *pool;
}

}  // namespace

MemoryResource& DefaultResource(MemoryKind kind, int device) {
  if (kind == MemoryKind::kHost) {
    static auto* host = new HostResource();
    return *host;
  }
  if (kind == MemoryKind::kPinned) return PinnedPool();
  if (device < 0) device = cuda::CurrentDevice();
  if (device >= cuda::DeviceCount()) {
    throw InvalidArgument("memory resource: expected a device id below " +
                          std::to_string(cuda::DeviceCount()) + ", got " + std::to_string(device));
  }
  std::lock_guard lock(DeviceResourcesMutex());
  auto& slot = DeviceResources()[{static_cast<int>(kind), device}];
  if (!slot) {
    if (kind == MemoryKind::kDevice) {
      slot = std::make_unique<DevicePoolResource>(device);
    } else {
      slot = std::make_unique<ManagedResource>(device);
    }
  }
  return *slot;
}

void TrimPinnedPool() { PinnedPool().Trim(); }

namespace {
void ReleasePoolsAtExit() {
  PinnedPool().Trim();
  std::lock_guard lock(DeviceResourcesMutex());
  DeviceResources().clear();
}
}  // namespace

}  // namespace conveyor
