// DLPack 1.x import and export (versioned DLManagedTensorVersioned and legacy DLManagedTensor).
//
// Import (zero-copy; the producer's deleter becomes the keep-alive owner of our Buffer):
//
// | dl_tensor.device.device_type | result    | MemoryKind | notes                                  |
// |------------------------------|-----------|------------|----------------------------------------|
// | kDLCUDA (2)                  | TensorGPU | kDevice    | Buffer device = device_id              |
// | kDLCUDAManaged (13)          | TensorGPU | kManaged   |                                        |
// | kDLCUDAHost (3)              | TensorCPU | kPinned    | also usable on the device (DeviceView) |
// | kDLCPU (1)                   | TensorCPU | kHost      | kPinned when CUDA reports the address  |
// |                              |           |            | page-locked (PyTorch exports pinned    |
// |                              |           |            | tensors as kDLCPU)                     |
//
// dtypes: bool (code 6, 8 bits), int/uint 8-64, float 16/32/64, bfloat 16; lanes 1. strides NULL
// means row-major; byte_offset is honoured; READ_ONLY makes the tensor read-only; zero-size
// tensors may have data NULL.
//
// Ownership: an import always takes ownership of the managed tensor. On success the deleter runs
// exactly once, when the last holder of the tensor's Buffer lets go; on any failure it has run
// before the InteropError leaves. A major-version mismatch calls the deleter and reads nothing
// but the version.
//
// Export: versioned by default, legacy on request; strides always written; data points at the
// first element with byte_offset 0 (what PyTorch, CuPy and JAX emit and every consumer reads);
// the deleter releases our Buffer, so the consumer may keep the data as long as it likes.
//
// Streams: the exporting side orders the consumer's stream after the tensor's ready event (event
// wait, never a host-blocking sync). Host (kDLCPU) consumers have no stream, so a pending ready
// event on a pageable host tensor is waited for on the host.
#pragma once

#include <cstdint>
#include <optional>

#include "core/interop/any_tensor.h"
#include "core/interop/dlpack_abi.h"

namespace conveyor::interop {

// Throws InteropError (see the ownership rules above). `managed` must not be NULL.
AnyTensor ImportDLPack(dlpack::DLManagedTensorVersioned* managed);
AnyTensor ImportDLPack(dlpack::DLManagedTensor* managed);

// `consumer_stream`: the stream on which the consumer will use the data (nullopt: the consumer
// asked for no synchronisation, DLPack's -1). The caller owns the result until it hands it on;
// whoever owns it last calls its deleter.
dlpack::DLManagedTensorVersioned* ExportDLPackVersioned(const AnyTensor& tensor,
                                                        std::optional<StreamView> consumer_stream);
// Legacy DLPack cannot say "read-only": exporting a read-only tensor this way throws
// InteropError rather than let the consumer write into it.
dlpack::DLManagedTensor* ExportDLPackLegacy(const AnyTensor& tensor,
                                            std::optional<StreamView> consumer_stream);

// The DLPack device of a tensor as export would report it (what __dlpack_device__ returns).
dlpack::DLDevice DLPackDeviceOf(const AnyTensor& tensor);

// Decodes the `stream` argument of __dlpack__: nullopt (Python None) means the legacy default
// stream; -1 no synchronisation; 1 legacy; 2 per-thread; 0 throws InteropError; else a handle.
std::optional<StreamView> DecodeDLPackStreamArgument(std::optional<int64_t> stream);

}  // namespace conveyor::interop
