#include "core/memory/virtual_buffer.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda/device.h"
#include "core/cuda/driver_api.h"
#include "core/error.h"
#include "core/memory/stats.h"

namespace conveyor {

struct VirtualBuffer::Impl {
  int device = 0;
  CUdeviceptr base = 0;
  size_t reserved = 0;
  size_t mapped = 0;
  size_t granularity = 0;
  struct Chunk {
    CUmemGenericAllocationHandle handle;
    size_t offset;
    size_t bytes;
  };
  std::vector<Chunk> chunks;
  std::mutex mutex;

  CUmemAllocationProp Prop() const {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
  }

  ~Impl() {
    const auto& d = cuda::Driver();
    for (const Chunk& c : chunks) {
      d.cuMemUnmap(base + c.offset, c.bytes);
      d.cuMemRelease(c.handle);
      MemoryStats::OnDeallocate(MemoryKind::kDevice, c.bytes);
    }
    if (base != 0) d.cuMemAddressFree(base, reserved);
  }
};

namespace {
size_t RoundUp(size_t n, size_t g) { return (n + g - 1) / g * g; }
}  // namespace

VirtualBuffer VirtualBuffer::Create(size_t max_bytes, size_t initial_bytes, int device) {
  if (max_bytes == 0) throw InvalidArgument("VirtualBuffer::Create: expected max_bytes > 0, got 0");
  if (initial_bytes > max_bytes) {
    throw InvalidArgument("VirtualBuffer::Create: initial_bytes " + std::to_string(initial_bytes) +
                          " exceeds max_bytes " + std::to_string(max_bytes));
  }
  const auto& d = cuda::Driver();
  VirtualBuffer vb;
  vb.impl_ = std::make_shared<Impl>();
  Impl& impl = *vb.impl_;
  impl.device = device < 0 ? cuda::CurrentDevice() : device;
  CUmemAllocationProp prop = impl.Prop();
  CONVEYOR_CU_CHECK(d.cuMemGetAllocationGranularity(&impl.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  impl.reserved = RoundUp(max_bytes, impl.granularity);
  CONVEYOR_CU_CHECK(d.cuMemAddressReserve(&impl.base, impl.reserved, impl.granularity, 0, 0));
  if (initial_bytes > 0) vb.Grow(initial_bytes);
  return vb;
}

DevicePtr<std::byte> VirtualBuffer::base() const {
  return impl_ ? DevicePtr<std::byte>::FromAddress(impl_->base) : DevicePtr<std::byte>();
}
size_t VirtualBuffer::mapped_bytes() const { return impl_ ? impl_->mapped : 0; }
size_t VirtualBuffer::reserved_bytes() const { return impl_ ? impl_->reserved : 0; }
size_t VirtualBuffer::granularity() const { return impl_ ? impl_->granularity : 0; }
size_t VirtualBuffer::chunk_count() const { return impl_ ? impl_->chunks.size() : 0; }
int VirtualBuffer::device() const { return impl_ ? impl_->device : -1; }

void VirtualBuffer::Grow(size_t bytes) {
  if (!impl_) throw InvalidArgument("VirtualBuffer::Grow on an empty VirtualBuffer");
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  if (bytes <= impl.mapped) return;
  if (bytes > impl.reserved) {
    throw OutOfMemory("VirtualBuffer::Grow: asked for " + std::to_string(bytes) +
                      " bytes, but only " + std::to_string(impl.reserved) + " bytes were reserved");
  }
  const auto& d = cuda::Driver();
  // Grow geometrically so a slowly rising batch size maps few chunks.
  size_t target = std::max(RoundUp(bytes, impl.granularity), std::min(impl.reserved, impl.mapped * 2));
  const size_t chunk = target - impl.mapped;
  CUmemAllocationProp prop = impl.Prop();
  CUmemGenericAllocationHandle handle{};
  const CUresult created = d.cuMemCreate(&handle, chunk, &prop, 0);
  if (created == CUDA_ERROR_OUT_OF_MEMORY) {
    throw OutOfMemory("VirtualBuffer::Grow: cuMemCreate could not allocate " + std::to_string(chunk) +
                      " bytes on device " + std::to_string(impl.device));
  }
  CONVEYOR_CU_CHECK(created);
  const CUdeviceptr at = impl.base + impl.mapped;
  CUresult mapped = d.cuMemMap(at, chunk, 0, handle, 0);
  if (mapped != CUDA_SUCCESS) {
    d.cuMemRelease(handle);
    CONVEYOR_CU_CHECK(mapped);
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = impl.device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const CUresult set = d.cuMemSetAccess(at, chunk, &access, 1);
  if (set != CUDA_SUCCESS) {
    d.cuMemUnmap(at, chunk);
    d.cuMemRelease(handle);
    CONVEYOR_CU_CHECK(set);
  }
  impl.chunks.push_back({handle, impl.mapped, chunk});
  impl.mapped += chunk;
  MemoryStats::OnUpstream(MemoryKind::kDevice, chunk);
  MemoryStats::OnAllocate(MemoryKind::kDevice, chunk);
}

Buffer VirtualBuffer::AsBuffer() const {
  if (!impl_) return Buffer();
  return Buffer::Wrap(reinterpret_cast<void*>(impl_->base), impl_->mapped, MemoryKind::kDevice,
                      impl_->device, impl_);
}

}  // namespace conveyor
