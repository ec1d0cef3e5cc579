// One Decode call's timeline on stderr (GpuDecoderOptions::trace_calls): each engines' part and
// each CUDA-backend or CPU image, start and end from phase B's start, per thread, with the CUDA
// images' phase times. The decoder holds a DecodeTrace only for traced calls; everything else
// passes a null pointer, so a call that is not traced pays nothing. Private to gpu_decoder.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "operators/decoders/decode_route.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

struct TracedImage {
  int image = 0;
  DecodePath path = DecodePath::kCuda;
  int thread = 0;  // the call's threads numbered in the order they first took an image
  int64_t start_ns = 0, end_ns = 0;
  // CUDA backend: nvJPEG's parse, the wait for a pinned buffer, host Huffman, issuing the device work.
  int64_t parse_ns = 0, wait_ns = 0, host_ns = 0, issue_ns = 0;
  // Of issue_ns: the transfer call's share; nvJPEG's allocator calls (device and pinned) during
  // the image and the time inside them.
  int64_t transfer_ns = 0, alloc_calls = 0, alloc_ns = 0;
  bool gpu_huffman = false;  // nvJPEG's GPU-Huffman decoder (above hybrid_huffman_threshold)
  // The image: its pixels, progressive or not, subsampling (what routing and the cost order saw).
  int64_t pixels = 0;
  bool progressive = false;
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;
};

class DecodeTrace {
 public:
  explicit DecodeTrace(int64_t call) : call_(call) {}
  void AddImage(TracedImage image);  // any thread; numbers the calling thread
  // `calls`: the part's host wait and each nvJPEG call (kind, images, pixels, host time).
  void AddEngines(int part, int images, int64_t start_ns, int64_t end_ns, std::string calls);  // any thread
  // Phase A: routing and the balance's split, the engines' support check, the whole phase.
  void SetPhaseA(int64_t route_ns, int64_t check_ns, int64_t total_ns) {
    route_ns_ = route_ns;
    check_ns_ = check_ns;
    phase_a_ns_ = total_ns;
  }
  std::string Line() const;          // the whole call, one line

 private:
  int64_t call_;
  int64_t route_ns_ = 0, check_ns_ = 0, phase_a_ns_ = 0;
  mutable std::mutex mu_;
  std::vector<std::thread::id> threads_;
  std::vector<TracedImage> images_;
  struct Part {
    int part, images;
    int64_t start_ns, end_ns;
    std::string calls;
  };
  std::vector<Part> parts_;
};

}  // namespace conveyor::ops
