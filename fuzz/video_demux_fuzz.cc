// libFuzzer target: the video family's untrusted-bytes path — libavformat's probing and demuxing
// through our AVIOContext over memory (the path decoders.video will take), the bitstream filters,
// the clip index, and frame-accurate decoding of a few frames (libavcodec + libswscale), under
// tight limits. Seeds: tiny clips of every codec and container (tools/make_test_videos
// --fuzz-seeds fuzz/video_demux/corpus).
// Contract: a conveyor::Error or success; no crash, no other exception, no UB, no hang (the limits'
// deadline), and the index's promises hold (timestamps rising, keyframe 0 first, keyframes inside).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "operators/readers/io/memory_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/demux.h"

namespace {

using namespace conveyor::ops;         // NOLINT: a fuzz target's one translation unit
using namespace conveyor::ops::video;  // NOLINT

VideoLimits FuzzLimits() {
  VideoLimits limits;
  limits.max_pixels = 1 << 16;  // 256 x 256: decoding stays fast per input
  limits.max_frames = 1 << 12;
  limits.max_packet_bytes = 1 << 20;
  limits.timeout_ms = 2000;
  limits.keyframe_retries = 1;
  return limits;
}

void CheckIndex(const ClipIndex& index) {
  if (index.frame_count() <= 0 || index.keyframes.empty() || index.keyframes[0] != 0) __builtin_trap();
  if (!std::is_sorted(index.pts.begin(), index.pts.end())) __builtin_trap();
  if (std::adjacent_find(index.pts.begin(), index.pts.end()) != index.pts.end()) __builtin_trap();
  for (int64_t k : index.keyframes) {
    if (k < 0 || k >= index.frame_count()) __builtin_trap();
  }
  if (static_cast<int64_t>(index.info.width) * index.info.height > FuzzLimits().max_pixels) __builtin_trap();
}

void DemuxIndexDecode(const uint8_t* data, size_t size) {
  const VideoLimits limits = FuzzLimits();
  auto source = std::make_shared<MemorySource>(data, size, "fuzz.video");
  Demuxer demuxer(source, limits);
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits));
  CheckIndex(*index);
  auto decoder = OpenCpuClipDecoder(source, index, limits, {});
  const int64_t n = index->frame_count();
  std::vector<uint8_t> out(static_cast<size_t>(decoder->frame_bytes()) * 2);
  // The last two frames (a seek), then the first (a seek back): each may fail with an Error.
  for (const std::vector<int64_t>& frames : {std::vector<int64_t>{std::max<int64_t>(0, n - 2), n - 1},
                                             std::vector<int64_t>{0}}) {
    std::vector<int64_t> clip = frames;
    clip.erase(std::unique(clip.begin(), clip.end()), clip.end());
    try {
      decoder->Decode(clip, out.data());
    } catch (const conveyor::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (4 << 20)) return 0;
  try {
    DemuxIndexDecode(data, size);
  } catch (const conveyor::Error&) {
    // Refused with a message: the contract.
  }
  return 0;
}
