// CUDA Array Interface (CAI) v3 import and export, from and to a plain struct (the Python bridge
// fills it from the `__cuda_array_interface__` dict; C callers fill conveyor_cai_t).
//
// Import rules (each violation throws InteropError naming the field, what was expected and what
// arrived):
// | field    | accepted                                                                          |
// |----------|-----------------------------------------------------------------------------------|
// | version  | 2 or 3 (< 2 predates the stream/strides rules we rely on; > 3 is unknown)           |
// | shape    | 0 to 8 extents, each >= 0                                                         |
// | typestr  | '<' or '|' (or '='), kind b/i/u/f, 1-8 bytes: "<f4", "|u1", "<f2", "|b1"; '>' (big |
// |          | endian) and complex are rejected                                                  |
// | data     | (ptr, read_only); ptr may be 0 only when the tensor has no elements               |
// | strides  | absent/None = C-contiguous; else bytes, one per dim, multiples of the item size  |
// | mask     | must be absent or None: masked arrays are rejected                                |
// | stream   | absent or None: no synchronisation needed (what PyCUDA exports) — accepted;        |
// |          | 1 legacy default, 2 per-thread default, other positive values a cudaStream_t; 0  |
// |          | and negative values are rejected                                                  |
//
// With a stream, an event is recorded on the producer's stream and becomes the tensor's ready
// event: every later user orders its stream after it (TensorGPU::WaitReady), never the host.
//
// CAI has no owner slot: the importer takes a release callback, called exactly once when the last
// holder of the tensor's Buffer lets go — or before the InteropError leaves when import fails.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/memory/memory_kind.h"
#include "core/tensor/tensor.h"

namespace conveyor::interop {

struct CudaArrayInterface {
  std::vector<int64_t> shape;
  std::string typestr;
  uintptr_t data = 0;
  bool read_only = false;
  std::optional<std::vector<int64_t>> strides;  // in bytes; nullopt: C-contiguous
  int64_t version = 3;
  std::optional<int64_t> stream;  // nullopt: absent or None
  bool has_mask = false;          // true when `mask` is present and not None
};

// Where CAI memory lives; CAI does not say, so by default the importer asks CUDA
// (cudaPointerGetAttributes). Callers that know (and tests without a GPU) pass it.
struct CaiMemory {
  MemoryKind kind = MemoryKind::kDevice;
  int device = 0;
};

TensorGPU ImportCudaArrayInterface(const CudaArrayInterface& cai, std::function<void()> release,
                                   std::optional<CaiMemory> memory = std::nullopt);

// CAI v3 fields for `tensor` (device-accessible memory: device, managed, or pinned through its
// mapped address). `stream` is ours, the one the consumer must order its work after: it is made
// to wait for the tensor's ready event and is advertised. Without a stream a pending ready event
// is waited for on the host and `stream` is left None. bfloat16 has no typestr: InteropError.
CudaArrayInterface ExportCudaArrayInterface(const TensorGPU& tensor, std::optional<StreamView> stream);

}  // namespace conveyor::interop
