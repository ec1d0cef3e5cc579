// Asynchronous copies between tensors on an explicit stream: host↔device, device↔device.
//
// Each copy waits (on `stream`, not the host) for the source's ready event, and records the
// destination's ready event on `stream` afterwards. Shapes and dtypes must match; both sides must
// be contiguous (InvalidArgument otherwise); the destination must be writable.
#pragma once

#include "core/tensor/tensor.h"
#include "core/tensor/tensor_list.h"

namespace conveyor {

void CopyAsync(TensorGPU& dst, const TensorCPU& src, StreamView stream);  // H2D
void CopyAsync(TensorCPU& dst, const TensorGPU& src, StreamView stream);  // D2H
void CopyAsync(TensorGPU& dst, const TensorGPU& src, StreamView stream);  // D2D
void CopyAsync(TensorCPU& dst, const TensorCPU& src, StreamView stream);  // H2H (pinned-friendly)

// Whole batches: resizes `dst` to the source's shapes (reusing its buffer when large enough) and
// copies the sample bytes (CopySampleBytesAsync: one copy per padding-free run of samples).
void CopyAsync(TensorListGPU& dst, const TensorListCPU& src, StreamView stream);
void CopyAsync(TensorListCPU& dst, const TensorListGPU& src, StreamView stream);
void CopyAsync(TensorListGPU& dst, const TensorListGPU& src, StreamView stream);

// The byte copy under all of the above (cudaMemcpyAsync with cudaMemcpyDefault: UVA tells the
// direction).
void CopyBytesAsync(void* dst, const void* src, size_t bytes, StreamView stream);
// Copies the sample bytes of a batch laid out like `layout` from `src_base` to `dst_base` (both
// buffers with that layout): one copy per run of samples with no padding between them, so the
// padding is never read (compute-sanitizer initcheck stays clean; an image batch of 16-byte
// multiples is one copy).
template <typename Backend>
void CopySampleBytesAsync(void* dst_base, const void* src_base, const TensorList<Backend>& layout, StreamView stream);

}  // namespace conveyor
