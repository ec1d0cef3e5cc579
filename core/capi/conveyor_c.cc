// The C API: status, streams and tensors. Exceptions become status codes in Guard (capi_internal.h),
// the one place where that happens.
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/capi/capi_internal.h"
#include "core/capi/scale_add.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/interop/cuda_array_interface.h"
#include "core/interop/dlpack.h"

struct conveyor_stream_s {
  conveyor::cuda::Stream stream;
};

namespace conveyor::capi {
namespace {

using interop::AnyTensor;

static_assert(static_cast<int>(DType::kBool) == CONVEYOR_DTYPE_BOOL);
static_assert(static_cast<int>(DType::kUInt8) == CONVEYOR_DTYPE_UINT8);
static_assert(static_cast<int>(DType::kInt8) == CONVEYOR_DTYPE_INT8);
static_assert(static_cast<int>(DType::kUInt16) == CONVEYOR_DTYPE_UINT16);
static_assert(static_cast<int>(DType::kInt16) == CONVEYOR_DTYPE_INT16);
static_assert(static_cast<int>(DType::kInt32) == CONVEYOR_DTYPE_INT32);
static_assert(static_cast<int>(DType::kInt64) == CONVEYOR_DTYPE_INT64);
static_assert(static_cast<int>(DType::kFloat16) == CONVEYOR_DTYPE_FLOAT16);
static_assert(static_cast<int>(DType::kBFloat16) == CONVEYOR_DTYPE_BFLOAT16);
static_assert(static_cast<int>(DType::kFloat32) == CONVEYOR_DTYPE_FLOAT32);
static_assert(static_cast<int>(DType::kFloat64) == CONVEYOR_DTYPE_FLOAT64);
static_assert(CONVEYOR_MAX_DIMS == Shape::kMaxDims && CONVEYOR_MAX_DIMS == kMaxStridedDims);
static_assert(CONVEYOR_DEVICE_CPU == dlpack::kDLCPU && CONVEYOR_DEVICE_CUDA == dlpack::kDLCUDA &&
              CONVEYOR_DEVICE_CUDA_HOST == dlpack::kDLCUDAHost &&
              CONVEYOR_DEVICE_CUDA_MANAGED == dlpack::kDLCUDAManaged);

thread_local std::string t_last_error;

}  // namespace

conveyor_status_t Fail(conveyor_status_t status, const char* function, const char* message) noexcept {
  try {
    t_last_error = std::string(function) + ": " + message;
  } catch (...) {
    // No memory for the message: keep the previous one rather than throw across the boundary.
  }
  return status;
}

namespace {

// Buffers whose handles were released while our GPU work still used them; each is dropped once
// its event completes (checked whenever a tensor is made or released). Leaked on purpose at
// exit: by then the producers' deleters may belong to libraries already torn down.
struct DeferredReleases {
  std::mutex mutex;
  std::vector<std::pair<std::shared_ptr<cuda::Event>, Buffer>> pending;

  void Add(std::shared_ptr<cuda::Event> event, Buffer buffer) {
    std::lock_guard lock(mutex);
    pending.emplace_back(std::move(event), std::move(buffer));
  }
  void Sweep() noexcept {
    std::vector<Buffer> done;  // released outside the lock: a deleter may call back into us
    {
      std::lock_guard lock(mutex);
      for (size_t i = 0; i < pending.size();) {
        bool finished = true;
        try {
          finished = pending[i].first->Query();
        } catch (...) {
          // A broken context will never report completion; holding the memory would only leak it.
        }
        if (finished) {
          done.push_back(std::move(pending[i].second));
          pending[i] = std::move(pending.back());
          pending.pop_back();
        } else {
          ++i;
        }
      }
    }
  }
};
DeferredReleases& Deferred() {
  static auto* deferred = new DeferredReleases;
  return *deferred;
}


int DeviceOf(const AnyTensor& t) {
  const int device = interop::BufferOf(t).device();
  return device >= 0 ? device : cuda::CurrentDevice();
}

// The data is ready after the work queued so far on `code`'s stream (if any).
void RecordReadyOn(AnyTensor& t, int64_t code) {
  const std::optional<StreamView> stream = cuda::DecodeInteropStream(code);
  if (!stream) return;
  cuda::DeviceGuard guard(DeviceOf(t));
  std::visit([&](auto& x) { x.RecordReady(*stream); }, t);
}

StreamView RequireStream(int64_t code, const char* name) {
  const std::optional<StreamView> stream = cuda::DecodeInteropStream(code);
  if (!stream) throw InvalidArgument(std::string(name) + ": expected a stream, got -1 (none)");
  return *stream;
}

// `data`: t's first element, fetched writable or read-only by the caller.
StridedF32 ViewOf(const TensorGPU& t, const void* data) {
  StridedF32 v;
  v.data = static_cast<float*>(const_cast<void*>(data));
  v.ndim = t.ndim();
  for (int d = 0; d < t.ndim(); ++d) {
    v.shape[d] = t.shape()[d];
    v.strides[d] = t.strides()[d];
  }
  return v;
}

template <typename Managed>
conveyor_status_t FromDLPack(const char* function, Managed* managed, int64_t ready_stream, conveyor_tensor_t* out) {
  return Guard(function, [&] {
    // Ownership passes first, so every failure below still runs the producer's deleter once.
    AnyTensor t = interop::ImportDLPack(reinterpret_cast<Managed*>(managed));
    Require(out, "out");
    RecordReadyOn(t, ready_stream);
    *out = NewHandle(std::move(t));
  });
}

}  // namespace

void WaitLastUse(const conveyor_tensor_s& h, std::optional<StreamView> consumer) {
  if (!consumer) return;
  if (h.last_use) h.last_use->Wait(*consumer);
  if (h.on_consumer_stream) h.on_consumer_stream(*consumer);
}

conveyor_tensor_t NewHandle(AnyTensor tensor) {
  Deferred().Sweep();
  auto handle = std::make_unique<conveyor_tensor_s>();
  handle->tensor = std::move(tensor);
  return handle.release();
}

}  // namespace conveyor::capi

using namespace conveyor;        // NOLINT: the C functions below are thin shims
using namespace conveyor::capi;  // NOLINT

extern "C" {

uint32_t conveyor_abi_version(void) { return CONVEYOR_ABI_VERSION; }

const char* conveyor_last_error(void) { return t_last_error.c_str(); }

const char* conveyor_status_name(conveyor_status_t status) {
  switch (status) {
    case CONVEYOR_OK: return "CONVEYOR_OK";
    case CONVEYOR_ERROR_INVALID_ARGUMENT: return "CONVEYOR_ERROR_INVALID_ARGUMENT";
    case CONVEYOR_ERROR_INTEROP: return "CONVEYOR_ERROR_INTEROP";
    case CONVEYOR_ERROR_CUDA: return "CONVEYOR_ERROR_CUDA";
    case CONVEYOR_ERROR_OUT_OF_MEMORY: return "CONVEYOR_ERROR_OUT_OF_MEMORY";
    case CONVEYOR_ERROR_CONFIG: return "CONVEYOR_ERROR_CONFIG";
    case CONVEYOR_ERROR_PLUGIN: return "CONVEYOR_ERROR_PLUGIN";
    case CONVEYOR_ERROR_INTERNAL: return "CONVEYOR_ERROR_INTERNAL";
  }
  return "unknown status";
}

const char* conveyor_dtype_name(conveyor_dtype_t dtype) {
  if (dtype < CONVEYOR_DTYPE_BOOL || dtype > CONVEYOR_DTYPE_FLOAT64) return nullptr;
  return DTypeName(static_cast<DType>(dtype)).data();  // the names are NUL-terminated literals
}

conveyor_status_t conveyor_stream_create(int32_t device, conveyor_stream_t* out) {
  return Guard(__func__, [&] {
    Require(out, "out");
    cuda::DeviceGuard guard(device);
    auto s = std::make_unique<conveyor_stream_s>();
    s->stream = cuda::Stream::Create();
    *out = s.release();
  });
}

conveyor_status_t conveyor_stream_code(conveyor_stream_t stream, int64_t* out) {
  return Guard(__func__, [&] {
    *Require(out, "out") = cuda::EncodeInteropStream(Require(stream, "stream")->stream.view());
  });
}

conveyor_status_t conveyor_stream_synchronize(conveyor_stream_t stream) {
  return Guard(__func__, [&] {
    Require(stream, "stream")->stream.Synchronize();
    Deferred().Sweep();
  });
}

void conveyor_stream_destroy(conveyor_stream_t stream) { delete stream; }

conveyor_status_t conveyor_tensor_from_dlpack_versioned(DLManagedTensorVersioned* managed, int64_t ready_stream,
                                                        conveyor_tensor_t* out) {
  return FromDLPack(__func__, reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed), ready_stream, out);
}

conveyor_status_t conveyor_tensor_from_dlpack(DLManagedTensor* managed, int64_t ready_stream, conveyor_tensor_t* out) {
  return FromDLPack(__func__, reinterpret_cast<dlpack::DLManagedTensor*>(managed), ready_stream, out);
}

conveyor_status_t conveyor_tensor_from_cai(const conveyor_cai_t* cai, conveyor_release_fn release,
                                           void* release_context, conveyor_tensor_t* out) {
  // Until the importer owns it, a pending release runs when this call fails.
  struct PendingRelease {
    conveyor_release_fn fn;
    void* context;
    ~PendingRelease() {
      if (fn != nullptr) fn(context);
    }
    std::function<void()> Take() {
      if (fn == nullptr) return {};
      return [f = std::exchange(fn, nullptr), c = context] { f(c); };
    }
  } pending{release, release_context};
  return Guard(__func__, [&] {
    Require(cai, "cai");
    Require(out, "out");
    if (cai->ndim < 0 || cai->ndim > CONVEYOR_MAX_DIMS) {
      throw InteropError(
          "CUDA Array Interface import: field \"shape\": expected 0 to 8 dimensions, got " +
          std::to_string(cai->ndim));
    }
    interop::CudaArrayInterface fields;
    if (cai->ndim > 0) fields.shape.assign(Require(cai->shape, "cai->shape"), cai->shape + cai->ndim);
    if (cai->strides != nullptr) fields.strides.emplace(cai->strides, cai->strides + cai->ndim);
    fields.typestr = Require(cai->typestr, "cai->typestr");
    fields.data = cai->data;
    fields.read_only = cai->read_only != 0;
    fields.version = cai->version;
    if (cai->has_stream) fields.stream = cai->stream;
    fields.has_mask = cai->has_mask != 0;
    TensorGPU t = interop::ImportCudaArrayInterface(fields, pending.Take());
    *out = NewHandle(std::move(t));
  });
}

conveyor_status_t conveyor_tensor_empty(int32_t ndim, const int64_t* shape, conveyor_dtype_t dtype,
                                        int32_t device_type, int32_t device_id, int64_t stream,
                                        conveyor_tensor_t* out) {
  return Guard(__func__, [&] {
    Require(out, "out");
    const Shape dims = CheckedDims(ndim, dtype, shape);
    const std::optional<StreamView> s = cuda::DecodeInteropStream(stream);
    const DType type = static_cast<DType>(dtype);
    const size_t bytes = static_cast<size_t>(dims.num_elements()) * DTypeSize(type);
    AnyTensor t;
    switch (device_type) {
      case CONVEYOR_DEVICE_CPU:
        t = TensorCPU::FromBuffer(Buffer::Allocate(MemoryKind::kHost, bytes), 0, dims, type);
        break;
      case CONVEYOR_DEVICE_CUDA_HOST:
        t = TensorCPU::FromBuffer(Buffer::Allocate(MemoryKind::kPinned, bytes, s), 0, dims, type);
        break;
      case CONVEYOR_DEVICE_CUDA:
      case CONVEYOR_DEVICE_CUDA_MANAGED: {
        if (device_id < 0) throw InvalidArgument("device_id: expected >= 0, got " + std::to_string(device_id));
        cuda::DeviceGuard guard(device_id);
        const MemoryKind kind = device_type == CONVEYOR_DEVICE_CUDA ? MemoryKind::kDevice : MemoryKind::kManaged;
        t = TensorGPU::FromBuffer(Buffer::Allocate(kind, bytes, s, device_id), 0, dims, type);
        break;
      }
      default:
        throw InvalidArgument("device_type: expected CONVEYOR_DEVICE_CPU (1), _CUDA (2), _CUDA_HOST (3) or "
                              "_CUDA_MANAGED (13), got " + std::to_string(device_type));
    }
    // Stream-ordered memory is usable after the work queued on `stream`; other streams wait on this.
    if (s && device_type != CONVEYOR_DEVICE_CPU) RecordReadyOn(t, stream);
    *out = NewHandle(std::move(t));
  });
}

conveyor_status_t conveyor_tensor_to_dlpack_versioned(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                      DLManagedTensorVersioned** out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");
    const std::optional<StreamView> consumer = cuda::DecodeInteropStream(consumer_stream);
    WaitLastUse(*tensor, consumer);
    *out = reinterpret_cast<DLManagedTensorVersioned*>(interop::ExportDLPackVersioned(tensor->tensor, consumer));
  });
}

conveyor_status_t conveyor_tensor_to_dlpack(conveyor_tensor_t tensor, int64_t consumer_stream,
                                            DLManagedTensor** out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");
    const std::optional<StreamView> consumer = cuda::DecodeInteropStream(consumer_stream);
    WaitLastUse(*tensor, consumer);
    *out = reinterpret_cast<DLManagedTensor*>(interop::ExportDLPackLegacy(tensor->tensor, consumer));
  });
}

conveyor_status_t conveyor_tensor_info(conveyor_tensor_t tensor, conveyor_tensor_info_t* out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");
    conveyor_tensor_info_t info{};
    interop::Visit(tensor->tensor, [&](const auto& t) {
      info.ndim = t.ndim();
      for (int d = 0; d < t.ndim(); ++d) {
        info.shape[d] = t.shape()[d];
        info.strides[d] = t.strides()[d];
      }
      info.dtype = static_cast<conveyor_dtype_t>(t.dtype());
      info.read_only = t.read_only() ? 1 : 0;
      // The allocation's own address (host address of pinned memory), as DLPack reports it.
      char* base = static_cast<char*>(t.buffer().data());
      info.data = base == nullptr ? nullptr : base + t.byte_offset();
    });
    const dlpack::DLDevice device = interop::DLPackDeviceOf(tensor->tensor);
    info.device_type = device.device_type;
    info.device_id = device.device_id;
    *out = info;
  });
}

void conveyor_tensor_release(conveyor_tensor_t tensor) {
  if (tensor == nullptr) return;
  std::unique_ptr<conveyor_tensor_s> handle(tensor);
  try {
    if (handle->last_use && !handle->last_use->Query()) {
      Deferred().Add(handle->last_use, interop::BufferOf(handle->tensor));
    }
  } catch (...) {
    // Query failed (broken context) or no memory to defer: release now; nothing may escape.
  }
  handle.reset();
  Deferred().Sweep();
}

conveyor_status_t conveyor_scale_add(conveyor_tensor_t out, conveyor_tensor_t in, float a, float b, int64_t stream) {
  return Guard(__func__, [&] {
    Require(out, "out");
    Require(in, "in");
    const StreamView s = RequireStream(stream, "stream");
    const TensorGPU src = interop::DeviceView(in->tensor);
    if (interop::Visit(out->tensor, [](const auto& t) { return t.read_only(); })) {
      throw InvalidArgument("out: expected a writable tensor, got a read-only one (imported read-only)");
    }
    TensorGPU dst = interop::DeviceView(out->tensor);
    if (src.dtype() != DType::kFloat32 || dst.dtype() != DType::kFloat32) {
      throw InvalidArgument("expected float32 tensors, got out " + std::string(DTypeName(dst.dtype())) + " and in " +
                            std::string(DTypeName(src.dtype())));
    }
    if (!(src.shape() == dst.shape())) {
      throw InvalidArgument("expected equal shapes, got out " + dst.shape().ToString() + " and in " +
                            src.shape().ToString());
    }
    cuda::DeviceGuard guard(DeviceOf(out->tensor));
    // Every earlier write of either tensor, and our earlier reads of them, come first.
    src.WaitReady(s);
    dst.WaitReady(s);
    WaitLastUse(*in, s);
    WaitLastUse(*out, s);
    ScaleAddF32(ViewOf(dst, dst.raw_mutable_data()), ViewOf(src, src.raw_data()), a, b, s);
    auto done = std::make_shared<cuda::Event>(cuda::Event::Create());
    done->Record(s);
    std::visit([&](auto& t) { t.set_ready_event(done); }, out->tensor);
    out->last_use = done;
    in->last_use = done;
  });
}

}  // extern "C"
