#include "operators/decoders/cpu_path.h"

#include <algorithm>

#include "core/cuda/check.h"

namespace conveyor::ops {

CpuPath::Staging& CpuPath::At(int slot, Area area) {
  const size_t i = static_cast<size_t>(slot) * 2 + static_cast<size_t>(area);
  if (staging_.size() <= i) staging_.resize(i + 1);
  return staging_[i];
}

void CpuPath::Prepare(int slot, Area area, const std::vector<int>& images, const std::vector<GpuDecodeSample>& samples,
                      int channels) {
  Staging& st = At(slot, area);
  st.images = images;
  st.offsets.resize(images.size());
  size_t total = 0;
  for (size_t k = 0; k < images.size(); ++k) {
    const GpuDecodeSample& s = samples[static_cast<size_t>(images[k])];
    st.offsets[k] = total;
    total += (static_cast<size_t>(s.roi.h * s.roi.w * channels) + 63) / 64 * 64;
  }
  if (total > 0 && st.buffer.size() < total) {
    // Grow by at least a quarter so a batch that varies a little does not reallocate each time.
    st.buffer = Buffer::Allocate(MemoryKind::kPinned, std::max(total, st.buffer.size() + st.buffer.size() / 4));
  }
}

void CpuPath::Decode(int slot, Area area, size_t k, const CpuDecodeFn& cpu_decode) {
  Staging& st = At(slot, area);
  cpu_decode(st.images[k], static_cast<uint8_t*>(st.buffer.host_ptr()) + st.offsets[k]);
}

void CpuPath::Upload(int slot, Area area, const std::vector<GpuDecodeSample>& samples, int channels,
                     StreamView stream) {
  Staging& st = At(slot, area);
  const uint8_t* base = static_cast<const uint8_t*>(st.buffer.host_ptr());
  for (size_t k = 0; k < st.images.size(); ++k) {
    const GpuDecodeSample& s = samples[static_cast<size_t>(st.images[k])];
    const size_t bytes = static_cast<size_t>(s.roi.h * s.roi.w * channels);
    if (bytes == 0) continue;
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(s.out, base + st.offsets[k], bytes, cudaMemcpyHostToDevice, stream.get()));
  }
}

}  // namespace conveyor::ops
