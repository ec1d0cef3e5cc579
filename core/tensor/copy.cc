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
    CopySampleBytesAsync(out, in, src, stream);
  }
  dst.RecordReady(stream);
}

}  // namespace

void CopyBytesAsync(void* dst, const void* src, size_t bytes, StreamView stream) {
  if (bytes == 0) return;
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.get()));
}

template <typename Backend>
void CopySampleBytesAsync(void* dst_base, const void* src_base, const TensorList<Backend>& layout, StreamView stream) {
  const size_t item = DTypeSize(layout.dtype());
  int64_t run_begin = 0, run_end = 0;  // byte range of consecutive samples with no padding between
  const auto flush = [&] {
    if (run_end > run_begin) {
      CopyBytesAsync(static_cast<char*>(dst_base) + run_begin, static_cast<const char*>(src_base) + run_begin,
                     static_cast<size_t>(run_end - run_begin), stream);
    }
  };
  for (int s = 0; s < layout.num_samples(); ++s) {
    const int64_t begin = layout.offset(s);
    const int64_t end = begin + layout.shape(s).num_elements() * static_cast<int64_t>(item);
    if (begin != run_end) {
      flush();
      run_begin = begin;
    }
    run_end = end;
  }
  flush();
}
template void CopySampleBytesAsync(void*, const void*, const TensorList<CPUBackend>&, StreamView);
template void CopySampleBytesAsync(void*, const void*, const TensorList<GPUBackend>&, StreamView);

void CopyAsync(TensorGPU& dst, const TensorCPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorCPU& dst, const TensorGPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorGPU& dst, const TensorGPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorCPU& dst, const TensorCPU& src, StreamView stream) { CopyTensor(dst, src, stream); }
void CopyAsync(TensorListGPU& dst, const TensorListCPU& src, StreamView stream) { CopyList(dst, src, stream); }
void CopyAsync(TensorListCPU& dst, const TensorListGPU& src, StreamView stream) { CopyList(dst, src, stream); }
void CopyAsync(TensorListGPU& dst, const TensorListGPU& src, StreamView stream) { CopyList(dst, src, stream); }

}  // namespace conveyor
