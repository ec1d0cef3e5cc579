#include "core/tensor/copy.h"

#include <cuda_runtime_api.h>

#include "core/cuda/check.h"
#include "core/error.h"

namespace conveyor {
namespace {

template <typename Dst, typename Src>
void CopyTensor(Dst& dst, const Src& src, StreamView stream) {
  if (!(dst.shape() == src.shape()) || dst.dtype() != src.dtype()) {
    throw InvalidArgument("CopyAsync: expected matching shape and dtype, got destination " +
                          dst.shape().ToString() + " " + std::string(DTypeName(dst.dtype())) +
                          " and source " + src.shape().ToString() + " " + std::string(DTypeName(src.dtype())));
  }
  if (!dst.is_contiguous() || !src.is_contiguous()) {
    throw InvalidArgument("CopyAsync: expected contiguous tensors, got strides destination " +
                          dst.strides().ToString() + " source " + src.strides().ToString());
  }
  void* out = dst.raw_mutable_data();
  src.WaitReady(stream);
  CopyBytesAsync(out, src.raw_data(), src.nbytes(), stream);
  dst.RecordReady(stream);
}

template <typename Dst, typename Src>
void CopyList(Dst& dst, const Src& src, StreamView stream) {
  dst.Resize(src.shapes(), src.dtype(), stream);
  dst.set_layout(src.layout());
  src.WaitReady(stream);
  if (src.nbytes() > 0) {
    char* out = static_cast<char*>(dst.raw_sample(0)) - dst.offset(0);
    const char* in = static_cast<const char*>(src.raw_sample(0)) - src.offset(0);
    CopyBytesAsync(out, in, src.nbytes(), stream);
  }
  dst.RecordReady(stream);
}

}  // namespace

void CopyBytesAsync(void* dst, const void* src, size_t bytes, StreamView stream) {
  if (bytes == 0) return;
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
}

void CopyAsync(TensorGPU& dst, const TensorCPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorCPU& dst, const TensorGPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorGPU& dst, const TensorGPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorCPU& dst, const TensorCPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorListGPU& dst, const TensorListCPU& src, StreamView stream) { CopyList(dst, src, stream); }
void CopyAsync(TensorListCPU& dst, const TensorListGPU& src, StreamView stream) { CopyList(dst, src, stream); }
void CopyAsync(TensorListGPU& dst, const TensorListGPU& src, StreamView stream) { CopyList(dst, src, stream); }

}  // namespace conveyor
