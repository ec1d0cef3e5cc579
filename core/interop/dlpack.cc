#include "core/interop/dlpack.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/error.h"
#include "core/interop/interop_util.h"

namespace conveyor::interop {
namespace {

using dlpack::DLDevice;
using dlpack::DLDeviceType;
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

std::string DeviceTypeName(int32_t type) {
  switch (type) {
    case dlpack::kDLCPU: return "kDLCPU";
    case dlpack::kDLCUDA: return "kDLCUDA";
    case dlpack::kDLCUDAHost: return "kDLCUDAHost";
    case dlpack::kDLOpenCL: return "kDLOpenCL";
    case dlpack::kDLVulkan: return "kDLVulkan";
    case dlpack::kDLMetal: return "kDLMetal";
    case dlpack::kDLVPI: return "kDLVPI";
    case dlpack::kDLROCM: return "kDLROCM";
    case dlpack::kDLROCMHost: return "kDLROCMHost";
    case dlpack::kDLExtDev: return "kDLExtDev";
    case dlpack::kDLCUDAManaged: return "kDLCUDAManaged";
    case dlpack::kDLOneAPI: return "kDLOneAPI";
    default: return "unknown";
  }
}

[[noreturn]] void Fail(const char* what, const std::string& field, const std::string& message) {
  throw InteropError(std::string(what) + ": " + field + ": " + message);
}

// True when CUDA says `ptr` is page-locked host memory. Only asked on machines with a device, so
// CPU-only users never create a CUDA context.
bool IsPageLockedHost(const void* ptr) {
  if (ptr == nullptr || !cuda::HasCudaDevice()) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();  // pageable memory on old drivers reports an error; clear it
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

AnyTensor ImportDLTensor(const DLTensor& dl, bool read_only, std::shared_ptr<void> owner,
                         const char* what) {
  const int32_t type = dl.device.device_type;
  if (type != dlpack::kDLCPU && type != dlpack::kDLCUDA && type != dlpack::kDLCUDAHost &&
      type != dlpack::kDLCUDAManaged) {
    Fail(what, "dl_tensor.device.device_type",
         "expected kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) or kDLCUDAManaged (13), got " +
             std::to_string(type) + " (" + DeviceTypeName(type) + ")");
  }
  const int32_t device_id = dl.device.device_id;
  if (type == dlpack::kDLCUDA) {
    if (device_id < 0) {
      Fail(what, "dl_tensor.device.device_id",
           "expected a CUDA device ordinal >= 0, got " + std::to_string(device_id));
    }
    if (cuda::HasCudaDevice() && device_id >= cuda::DeviceCount()) {
      Fail(what, "dl_tensor.device.device_id",
           "expected a device below " + std::to_string(cuda::DeviceCount()) + ", got " +
               std::to_string(device_id));
    }
  }
  DType dtype;
  try {
    dtype = FromDLPackType(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes);
  } catch (const InteropError& e) {
    Fail(what, "dl_tensor.dtype", e.what());
  }
  if (dl.ndim < 0 || dl.ndim > Shape::kMaxDims) {
    Fail(what, "dl_tensor.ndim",
         "expected 0 to " + std::to_string(Shape::kMaxDims) + " dimensions, got " +
             std::to_string(dl.ndim));
  }
  if (dl.ndim > 0 && dl.shape == nullptr) {
    Fail(what, "dl_tensor.shape", "expected " + std::to_string(dl.ndim) + " extents, got NULL");
  }
  Shape shape(dl.shape, dl.shape + dl.ndim);
  CheckExtents(shape, what);
  Shape strides;
  // NULL strides (producers before DLPack 1.2) mean compact row-major.
  if (dl.ndim > 0) strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : RowMajorStrides(shape);
  if (dl.byte_offset > static_cast<uint64_t>(INT64_MAX)) {
    Fail(what, "dl_tensor.byte_offset", "expected a value below 2^63, got " + std::to_string(dl.byte_offset));
  }
  const Span span = ComputeSpan(shape, strides, DTypeSize(dtype), what);
  if (span.bytes != 0 && dl.data == nullptr) {
    Fail(what, "dl_tensor.data", "expected a pointer for a tensor of shape " + shape.ToString() + ", got NULL");
  }
  // Address arithmetic on integers: the producer's data + byte_offset (+ the lowest stride reach)
  // must not wrap, and pointer arithmetic on NULL or past an object would be undefined.
  const uintptr_t data = reinterpret_cast<uintptr_t>(dl.data);
  uintptr_t first_address = 0, base_address = 0;
  if (__builtin_add_overflow(data, dl.byte_offset, &first_address) ||
      __builtin_add_overflow(first_address, span.bytes == 0 ? 0 : span.lowest_byte, &base_address) ||
      (span.bytes != 0 && base_address > UINTPTR_MAX - span.bytes)) {
    Fail(what, "dl_tensor.byte_offset",
         "data + byte_offset " + std::to_string(dl.byte_offset) + " with shape " + shape.ToString() +
             " and strides " + strides.ToString() + " wraps around the address space");
  }
  char* first = reinterpret_cast<char*>(first_address);

  MemoryKind kind = MemoryKind::kHost;
  switch (type) {
    case dlpack::kDLCUDA: kind = MemoryKind::kDevice; break;
    case dlpack::kDLCUDAManaged: kind = MemoryKind::kManaged; break;
    case dlpack::kDLCUDAHost: kind = MemoryKind::kPinned; break;
    default: kind = IsPageLockedHost(first) ? MemoryKind::kPinned : MemoryKind::kHost; break;
  }
  // The Buffer covers exactly the bytes the strides reach (negative strides included), so the
  // tensor's own byte offset is never negative.
  char* base = reinterpret_cast<char*>(base_address);
  Buffer buffer = Buffer::Wrap(base, span.bytes, kind, device_id, std::move(owner));
  const int64_t offset = span.bytes == 0 ? 0 : -span.lowest_byte;
  if (type == dlpack::kDLCUDA || type == dlpack::kDLCUDAManaged) {
    return TensorGPU::FromBuffer(std::move(buffer), offset, shape, dtype, strides, {}, read_only);
  }
  return TensorCPU::FromBuffer(std::move(buffer), offset, shape, dtype, strides, {}, read_only);
}

// Calls the producer's deleter once, when the last holder of the Buffer lets go (or at once,
// when the import fails before a Buffer holds it).
template <typename Managed>
std::shared_ptr<void> DeleterOwner(Managed* managed) {
  return std::shared_ptr<void>(managed, [](void* p) {
    auto* m = static_cast<Managed*>(p);
    if (m->deleter != nullptr) m->deleter(m);
  });
}

// What an exported tensor's manager_ctx points at: the arrays the DLTensor refers to and the
// Buffer that keeps the data alive.
template <typename Managed>
struct ExportContext {
  Managed managed{};
  Buffer buffer;
  int64_t shape[Shape::kMaxDims] = {};
  int64_t strides[Shape::kMaxDims] = {};
};

void SyncForConsumer(const AnyTensor& tensor, std::optional<StreamView> consumer_stream) {
  const auto& ready = Visit(tensor, [](const auto& t) -> const auto& { return t.ready_event(); });
  if (!ready) return;
  if (BufferOf(tensor).kind() == MemoryKind::kHost) {
    // A kDLCPU consumer reads on the host and has no stream to wait with.
    ready->Synchronize();
  } else if (consumer_stream) {
    ready->Wait(*consumer_stream);
  }
}

template <typename Managed>
ExportContext<Managed>* FillExport(const AnyTensor& tensor) {
  auto ctx = std::make_unique<ExportContext<Managed>>();
  DLTensor& dl = ctx->managed.dl_tensor;
  Visit(tensor, [&](const auto& t) {
    ctx->buffer = t.buffer();
    dl.data = t.buffer().empty() ? nullptr : static_cast<char*>(t.buffer().data()) + t.byte_offset();
    dl.ndim = t.ndim();
    const DLPackTypeCode code = ToDLPackType(t.dtype());
    dl.dtype = {code.code, code.bits, code.lanes};
    for (int i = 0; i < t.ndim(); ++i) {
      ctx->shape[i] = t.shape()[i];
      ctx->strides[i] = t.strides()[i];
    }
  });
  dl.device = DLPackDeviceOf(tensor);
  dl.shape = ctx->shape;
  dl.strides = ctx->strides;  // always written, even for row-major (required from DLPack 1.2)
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = [](Managed* self) {
    delete static_cast<ExportContext<Managed>*>(self->manager_ctx);
  };
  return ctx.release();
}

}  // namespace

AnyTensor ImportDLPack(DLManagedTensorVersioned* managed) {
  constexpr const char* kWhat = "DLPack import (DLManagedTensorVersioned)";
  if (managed == nullptr) Fail(kWhat, "tensor", "expected a DLManagedTensorVersioned*, got NULL");
  const dlpack::DLPackVersion version = managed->version;
  if (version.major != dlpack::kMajorVersion) {
    // Nothing but the version may be read from a struct of another major version.
    if (managed->deleter != nullptr) managed->deleter(managed);
    Fail(kWhat, "version",
         "expected major version " + std::to_string(dlpack::kMajorVersion) + " (any minor), got " +
             std::to_string(version.major) + "." + std::to_string(version.minor) +
             "; the producer's deleter was called");
  }
  const bool read_only = (managed->flags & dlpack::kDLPackFlagBitmaskReadOnly) != 0;
  const DLTensor dl = managed->dl_tensor;
  return ImportDLTensor(dl, read_only, DeleterOwner(managed), kWhat);
}

AnyTensor ImportDLPack(DLManagedTensor* managed) {
  constexpr const char* kWhat = "DLPack import (legacy DLManagedTensor)";
  if (managed == nullptr) Fail(kWhat, "tensor", "expected a DLManagedTensor*, got NULL");
  const DLTensor dl = managed->dl_tensor;
  return ImportDLTensor(dl, /*read_only=*/false, DeleterOwner(managed), kWhat);
}

DLManagedTensorVersioned* ExportDLPackVersioned(const AnyTensor& tensor,
                                                std::optional<StreamView> consumer_stream) {
  SyncForConsumer(tensor, consumer_stream);
  auto* ctx = FillExport<DLManagedTensorVersioned>(tensor);
  ctx->managed.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
  const bool read_only = Visit(tensor, [](const auto& t) { return t.read_only(); });
  ctx->managed.flags = read_only ? dlpack::kDLPackFlagBitmaskReadOnly : 0;
  return &ctx->managed;
}

DLManagedTensor* ExportDLPackLegacy(const AnyTensor& tensor, std::optional<StreamView> consumer_stream) {
  if (Visit(tensor, [](const auto& t) { return t.read_only(); })) {
    throw InteropError(
        "DLPack export (legacy DLManagedTensor): expected a writable tensor, got a read-only one; "
        "legacy DLPack cannot mark data read-only, so ask for a versioned capsule (max_version >= "
        "(1, 0))");
  }
  SyncForConsumer(tensor, consumer_stream);
  return &FillExport<DLManagedTensor>(tensor)->managed;
}

DLDevice DLPackDeviceOf(const AnyTensor& tensor) {
  const Buffer& buffer = BufferOf(tensor);
  switch (buffer.kind()) {
    case MemoryKind::kDevice: return {dlpack::kDLCUDA, buffer.device() < 0 ? 0 : buffer.device()};
    case MemoryKind::kManaged: return {dlpack::kDLCUDAManaged, 0};
    case MemoryKind::kPinned: return {dlpack::kDLCUDAHost, 0};
    case MemoryKind::kHost: break;
  }
  return {dlpack::kDLCPU, 0};
}

std::optional<StreamView> DecodeDLPackStreamArgument(std::optional<int64_t> stream) {
  if (!stream) return StreamView::Legacy();  // None: the producer assumes the legacy default stream
  return cuda::DecodeInteropStream(*stream);
}

TensorGPU DeviceView(const AnyTensor& t) {
  if (const auto* gpu = std::get_if<TensorGPU>(&t)) return *gpu;
  const TensorCPU& cpu = std::get<TensorCPU>(t);
  if (!IsDeviceAccessible(cpu.memory_kind())) {
    throw InvalidArgument(
        "device view: expected device, pinned or managed memory, got pageable host memory (a "
        "kernel cannot read it; import pinned memory or copy it to the device)");
  }
  TensorGPU view = TensorGPU::FromBuffer(cpu.buffer(), cpu.byte_offset(), cpu.shape(), cpu.dtype(),
                                         cpu.strides(), cpu.layout(), cpu.read_only());
  view.set_ready_event(cpu.ready_event());
  return view;
}

}  // namespace conveyor::interop
