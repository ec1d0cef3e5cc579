#include "core/interop/cuda_array_interface.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <sstream>
#include <string>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/error.h"
#include "core/interop/interop_util.h"

namespace conveyor::interop {
namespace {

constexpr const char* kImport = "CUDA Array Interface import";

[[noreturn]] void Fail(const std::string& field, const std::string& message) {
  throw InteropError(std::string(kImport) + ": field \"" + field + "\": " + message);
}

std::string Hex(uintptr_t p) {
  std::ostringstream s;
  s << "0x" << std::hex << p;
  return s.str();
}

CaiMemory LookUpMemory(uintptr_t data) {
  if (!cuda::HasCudaDevice()) {
    Fail("data", "cannot tell where pointer " + Hex(data) + " lives: " + cuda::NoDeviceReason());
  }
  cudaPointerAttributes attributes{};
  CONVEYOR_CUDA_CHECK(cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(data)));
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return {MemoryKind::kDevice, attributes.device};
    case cudaMemoryTypeManaged: return {MemoryKind::kManaged, attributes.device};
    case cudaMemoryTypeHost: return {MemoryKind::kPinned, attributes.device};
    default: break;
  }
  Fail("data", "expected a device, managed or page-locked pointer, got " + Hex(data) +
                   ", which CUDA does not know (pageable host memory?)");
}

}  // namespace

TensorGPU ImportCudaArrayInterface(const CudaArrayInterface& cai, std::function<void()> release,
                                   std::optional<CaiMemory> memory) {
  // The owner exists first, so every failure below releases the producer exactly once.
  std::shared_ptr<void> owner(nullptr, [release = std::move(release)](void*) {
    if (release) release();
  });

  if (cai.version < 2 || cai.version > 3) {
    Fail("version", "expected 2 or 3, got " + std::to_string(cai.version));
  }
  if (cai.has_mask) {
    Fail("mask", "expected None or absent, got a mask; masked arrays are not supported (fill or "
                 "compress the masked elements first)");
  }
  DType dtype;
  try {
    dtype = FromNumpyTypestr(cai.typestr);
  } catch (const InteropError& e) {
    Fail("typestr", e.what());
  }
  const size_t item = DTypeSize(dtype);
  if (cai.shape.size() > static_cast<size_t>(Shape::kMaxDims)) {
    Fail("shape", "expected at most " + std::to_string(Shape::kMaxDims) + " dimensions, got " +
                      std::to_string(cai.shape.size()));
  }
  const Shape shape(cai.shape);
  CheckExtents(shape, kImport);
  Shape strides = RowMajorStrides(shape);
  if (cai.strides) {
    if (cai.strides->size() != cai.shape.size()) {
      Fail("strides", "expected " + std::to_string(cai.shape.size()) + " byte strides (one per dimension), got " +
                          std::to_string(cai.strides->size()));
    }
    for (size_t i = 0; i < cai.strides->size(); ++i) {
      const int64_t s = (*cai.strides)[i];
      if (s % static_cast<int64_t>(item) != 0) {
        Fail("strides", "expected byte strides that are multiples of the item size " + std::to_string(item) +
                            " (" + cai.typestr + "), got " + std::to_string(s) + " at index " + std::to_string(i));
      }
      strides[static_cast<int>(i)] = s / static_cast<int64_t>(item);
    }
  }
  const Span span = ComputeSpan(shape, strides, item, kImport);
  if (span.bytes != 0 && cai.data == 0) {
    Fail("data", "expected a pointer for shape " + shape.ToString() + ", got 0 (allowed only for zero-size arrays)");
  }
  std::optional<StreamView> producer;
  if (cai.stream) {
    if (*cai.stream <= 0) {
      Fail("stream", "expected None, 1 (legacy default), 2 (per-thread default) or a stream handle, got " +
                         std::to_string(*cai.stream) +
                         (*cai.stream == 0 ? " (disallowed by the spec)" : ""));
    }
    producer = cuda::DecodeInteropStream(*cai.stream);
  }

  CaiMemory where = memory ? *memory : CaiMemory{MemoryKind::kDevice, cuda::HasCudaDevice() ? cuda::CurrentDevice() : 0};
  if (!memory && cai.data != 0) where = LookUpMemory(cai.data);
  if (where.kind == MemoryKind::kHost) {
    Fail("data", "expected device-accessible memory, got pageable host memory at " + Hex(cai.data));
  }
  // Integer address arithmetic: the lowest element strides reach (and the end of the span) must
  // not wrap around; pointer arithmetic that did would be undefined.
  uintptr_t base_address = cai.data;
  if ((span.bytes != 0 && __builtin_add_overflow(cai.data, span.lowest_byte, &base_address)) ||
      base_address > UINTPTR_MAX - span.bytes) {
    Fail("strides", "data " + Hex(cai.data) + " with shape " + shape.ToString() + " and strides " +
                        strides.ToString() + " (elements) reaches outside the address space");
  }
  char* base = reinterpret_cast<char*>(base_address);
  Buffer buffer = Buffer::Wrap(base, span.bytes, where.kind, where.device, std::move(owner));
  TensorGPU tensor = TensorGPU::FromBuffer(std::move(buffer), span.bytes == 0 ? 0 : -span.lowest_byte, shape,
                                           dtype, strides, {}, cai.read_only);
  if (producer) {
    // The data is ready after the work queued on the producer's stream so far.
    cuda::DeviceGuard guard(where.device < 0 ? cuda::CurrentDevice() : where.device);
    tensor.RecordReady(*producer);
  }
  return tensor;
}

CudaArrayInterface ExportCudaArrayInterface(const TensorGPU& tensor, std::optional<StreamView> stream) {
  CudaArrayInterface cai;
  try {
    cai.typestr = ToNumpyTypestr(tensor.dtype());
  } catch (const InteropError& e) {
    throw InteropError(std::string("CUDA Array Interface export: field \"typestr\": ") + e.what() +
                       "; export it through DLPack instead");
  }
  cai.shape = tensor.shape().ToVector();
  cai.strides.emplace();
  for (int64_t s : tensor.strides()) cai.strides->push_back(s * static_cast<int64_t>(DTypeSize(tensor.dtype())));
  cai.data = reinterpret_cast<uintptr_t>(tensor.num_elements() == 0 ? nullptr : tensor.raw_data());
  cai.read_only = tensor.read_only();
  cai.version = 3;
  if (stream) {
    tensor.WaitReady(*stream);
    cai.stream = cuda::EncodeInteropStream(*stream);
  } else if (tensor.ready_event()) {
    tensor.ready_event()->Synchronize();
  }
  return cai;
}

}  // namespace conveyor::interop
