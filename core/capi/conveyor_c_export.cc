// The C API's exports of a tensor handle without copying: DLPack (legacy and versioned, to the
// device the data is on, or pinned memory as kDLCPU) and the CUDA Array Interface. The rest of the
// C API: conveyor_c.cc.
#include <optional>
#include <string>

#include "core/capi/capi_internal.h"
#include "core/capi/conveyor.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/interop/cuda_array_interface.h"
#include "core/interop/dlpack.h"

namespace conveyor::capi {
namespace {

// Whether a consumer asking for (device_type, device_id) gets pinned memory as kDLCPU; throws
// InvalidArgument for a device the data is not on (exports never copy).
bool ExportAsHost(const conveyor_tensor_s& h, int32_t device_type, int32_t device_id, int64_t consumer_stream) {
  const dlpack::DLDevice here = interop::DLPackDeviceOf(h.tensor);
  if (device_type == here.device_type && device_id == here.device_id) return false;
  const bool pinned = here.device_type == dlpack::kDLCUDAHost;
  if (!pinned || device_type != dlpack::kDLCPU || device_id != 0) {
    throw InvalidArgument("dl_device: expected (" + std::to_string(here.device_type) + ", " +
                          std::to_string(here.device_id) + "), where the data lives" +
                          (pinned ? std::string(", or (1, 0) (kDLCPU: pinned memory is host memory)") : "") +
                          ", got (" + std::to_string(device_type) + ", " + std::to_string(device_id) +
                          "); Conveyor exports without copying");
  }
  if (consumer_stream != -1) {
    throw InvalidArgument("consumer_stream: expected -1 for a kDLCPU consumer (it reads on the host, with no "
                          "stream), got " + std::to_string(consumer_stream));
  }
  return true;
}

// Exports pinned memory as kDLCPU: the host waits for our pending reads and writes and the
// producer's ready event (a host reader has no stream to order), then the device is relabelled —
// the address is the same host address either way.
template <typename Managed, typename Export>
Managed* ExportPinnedAsHost(const conveyor_tensor_s& h, Export export_fn) {
  if (h.last_use) h.last_use->Synchronize();
  const auto& ready = std::visit([](const auto& t) -> const auto& { return t.ready_event(); }, h.tensor);
  if (ready) ready->Synchronize();
  Managed* managed = export_fn(h.tensor, std::nullopt);
  managed->dl_tensor.device = {dlpack::kDLCPU, 0};
  return managed;
}

// One DLPack export (either struct): to the device the data is on, ordered after our pending work
// on the consumer's stream, or pinned memory as kDLCPU.
template <typename Managed, typename Export>
Managed* ExportDLPack(conveyor_tensor_t tensor, int64_t consumer_stream, int32_t device_type, int32_t device_id,
                      Export export_fn) {
  if (ExportAsHost(*tensor, device_type, device_id, consumer_stream)) {
    return ExportPinnedAsHost<Managed>(*tensor, export_fn);
  }
  const std::optional<StreamView> consumer = cuda::DecodeInteropStream(consumer_stream);
  WaitLastUse(*tensor, consumer);
  return export_fn(tensor->tensor, consumer);
}

}  // namespace
}  // namespace conveyor::capi

using namespace conveyor;        // NOLINT: the C functions below are thin shims
using namespace conveyor::capi;  // NOLINT

extern "C" {

conveyor_status_t conveyor_tensor_to_dlpack_versioned_on(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                         int32_t device_type, int32_t device_id,
                                                         DLManagedTensorVersioned** out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");  // before the export: a made export with nowhere to go would leak
    *out = reinterpret_cast<DLManagedTensorVersioned*>(ExportDLPack<dlpack::DLManagedTensorVersioned>(
        tensor, consumer_stream, device_type, device_id, interop::ExportDLPackVersioned));
  });
}

conveyor_status_t conveyor_tensor_to_dlpack_on(conveyor_tensor_t tensor, int64_t consumer_stream, int32_t device_type,
                                               int32_t device_id, DLManagedTensor** out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");
    *out = reinterpret_cast<DLManagedTensor*>(ExportDLPack<dlpack::DLManagedTensor>(
        tensor, consumer_stream, device_type, device_id, interop::ExportDLPackLegacy));
  });
}

void conveyor_dlpack_versioned_delete(DLManagedTensorVersioned* managed) {
  auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed);
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

void conveyor_dlpack_delete(DLManagedTensor* managed) {
  auto* m = reinterpret_cast<dlpack::DLManagedTensor*>(managed);
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

conveyor_status_t conveyor_tensor_to_cai(conveyor_tensor_t tensor, int64_t stream, conveyor_cai_t* out) {
  return Guard(__func__, [&] {
    Require(tensor, "tensor");
    Require(out, "out");
    const std::optional<StreamView> s = cuda::DecodeInteropStream(stream);
    const TensorGPU view = interop::DeviceView(tensor->tensor);
    if (s) {
      WaitLastUse(*tensor, s);
    } else if (tensor->last_use) {
      tensor->last_use->Synchronize();
    }
    const interop::CudaArrayInterface cai = interop::ExportCudaArrayInterface(view, s);
    tensor->cai_shape = cai.shape;
    tensor->cai_strides = *cai.strides;
    tensor->cai_typestr = cai.typestr;
    conveyor_cai_t result{};
    result.version = static_cast<int32_t>(cai.version);
    result.ndim = static_cast<int32_t>(cai.shape.size());
    result.shape = tensor->cai_shape.data();
    result.strides = tensor->cai_strides.data();
    result.typestr = tensor->cai_typestr.c_str();
    result.data = cai.data;
    result.read_only = cai.read_only ? 1 : 0;
    result.has_stream = cai.stream ? 1 : 0;
    result.stream = cai.stream.value_or(0);
    result.has_mask = 0;
    *out = result;
  });
}

}  // extern "C"
