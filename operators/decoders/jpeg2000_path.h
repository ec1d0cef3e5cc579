// GpuDecoder's nvJPEG2000 path: JPEG 2000 files (JP2 and raw J2K) decoded on the GPU, one image at a
// time: parse on the calling thread, nvjpeg2kDecodeImage on a worker's own stream into scratch
// planes, then one kernel (jpeg2000_convert.h) into the image's output. Private to gpu_decoder.
//
// | takes                                           | refuses (the router's chain: the CPU path)  |
// |-------------------------------------------------|---------------------------------------------|
// | 1 (gray) or 3 (RGB) components, 8-bit unsigned, | other component counts (gray+alpha, RGBA),  |
// | full size (not subsampled), lossless or lossy,  | other depths (12-, 16-bit), signed or       |
// | tiled or not, any window                        | subsampled components; what                 |
// |                                                 | Jpeg2000GpuObstacle names (palettes, cdef,  |
// |                                                 | offsets); a stream whose size is not the    |
// |                                                 | header's; what nvJPEG2000 says it does not  |
// |                                                 | support; data it finds damaged (the CPU     |
// |                                                 | path then decodes it or names the damage)   |
//
// Windows: nvjpeg2kDecodeParamsSetDecodeArea, so only the code blocks under the window are decoded
// into window-sized planes. Colours as the CPU decoders convert (format.h): gray replicated, RGB
// swapped for BGR, GRAY from RGB by Luma; 1-component images to GRAY are decoded straight into the
// output.
//
// Workers are taken by each ParallelFor chunk, like the CUDA backend's (cuda_path.h): each owns a
// stream (which first waits for the call's `start` event: the outputs exist), a parse handle and
// kStates nvJPEG2000 decode states taking turns image by image. A state is reused only after its
// previous image's device work finished (nvJPEG2000 requires it; an event per state), so the host
// phase of the next image overlaps the device work of the one before. Each state's scratch planes
// grow on its worker's stream and are kept.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "operators/decoders/decode_path_common.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"
#include "operators/decoders/nvjpeg2k/nvjpeg2k_loader.h"

namespace conveyor::ops {

class Jpeg2000Path {
 public:
  struct Worker;
  static constexpr int kStates = 2;

  Jpeg2000Path();
  ~Jpeg2000Path();
  Jpeg2000Path(const Jpeg2000Path&) = delete;
  Jpeg2000Path& operator=(const Jpeg2000Path&) = delete;

  // Makes the library handle (on our memory pools where the library takes allocators); throws
  // Nvjpeg2kError when nvJPEG2000 refuses.
  void Init(const nvjpeg2k::Nvjpeg2kLibrary& lib, DecodeColor color);
  void Destroy() noexcept;
  bool ready() const { return handle_ != nullptr; }
  NvjpegMemory memory() const { return alloc_ ? alloc_->memory() : NvjpegMemory{}; }

  // A worker for one chunk: its stream waits for `start` first. Give it back with Done().
  Worker* Take(cudaEvent_t start);
  // Records the worker's end; ws.stream() must wait for EndEvent of every worker used.
  void Done(Worker* w);
  static cudaEvent_t EndEvent(const Worker* w);

  // Decodes one image into s.out (its window, the decoder's colour); false when the path refuses
  // it (the table above; nothing was queued for it). Throws Nvjpeg2kError for other failures.
  bool Decode(Worker& w, const GpuDecodeSample& s, const std::string& where);

 private:
  struct State;
  State& NextState(Worker& w);  // the worker's next state, its previous image finished

  const nvjpeg2k::Nvjpeg2kLibrary* lib_ = nullptr;
  DecodeColor color_ = DecodeColor::kRgb;
  std::unique_ptr<NvjpegAllocators> alloc_;  // declared before the handle: outlives it
  nvjpeg2k::nvjpeg2kHandle_t handle_ = nullptr;
  std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> free_;
};


}  // namespace conveyor::ops
