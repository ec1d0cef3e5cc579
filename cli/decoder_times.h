// The GPU decoders' time per Decode call between two readings of ProcessGpuDecoderCounters (every
// decoder of the process): where a decoding pipeline's GPU issue time goes (docs/decoding.md),
// and how its phase B was split between the JPEG engines and the CUDA backend — `conveyor bench`
// reports both for its timed part.
#pragma once

#include "operators/decoders/gpu_decoder.h"

namespace conveyor::cli {

struct DecoderTimes {
  double calls = 0;  // Decode calls in the span; the rest is 0 when there were none
  // ms per call: waiting for the slot's previous work, phase A (classify), phase B (engines +
  // CUDA backend), phase C (CPU path), the whole call; the fraction of calls that waited.
  double wait = 0, classify = 0, b = 0, c = 0, call = 0, pending = 0;
  // The mix: images per call on each path and the engines' share of the accepted ones.
  double engines_images = 0, cuda_images = 0, cpu_images = 0, engines_share = 0;
  double cuda_shared_images = 0;  // of cuda_images, on the CUDA backend's shared states
  // Look-ahead: of cuda_images, those decoded before their call; those picked but taken back by
  // their call (not started in time); ms per call waiting for the ones decoded ahead.
  double ahead_images = 0, ahead_taken_back = 0, ahead_wait = 0;
  // ms per engines' batch whose GPU time was read: host time inside nvJPEG's batched call, and
  // GPU time between its events; ms per call of the CUDA backend's part of phase B.
  double engines_host = 0, engines_gpu = 0, cuda = 0;
  // ms per call of the CUDA backend's workers' thread time (summed over workers): parse + host
  // Huffman, waiting for a pinned buffer's previous transfer, issuing transfer + device phase.
  double cuda_host = 0, cuda_pinned_wait = 0, cuda_issue = 0;
  // Per call: the engines' images in calls of their own (4:4:4, 4:2:2, gray), images a path refused,
  // and the CPU path's decode thread time (ms).
  double engines_other_images = 0, fallbacks = 0, cpu_decode = 0;
  // The balancer's smoothed rates at the span's end, megapixels/s.
  double engines_rate = 0, cuda_rate = 0;
  // What nvJPEG reports of the JPEG engines (nvjpegGetHardwareDecoderInfo; 0 when not).
  int engines = 0, cores_per_engine = 0;
  // Hardware handles made, and those the tuner lets a call use at the span's end (PartsTuner).
  int handles = 0, handles_chosen = 0;
  int engines_only_chosen = 0;  // the tuner's choice at the end: 1 every 4:2:0 image on the engines
};

DecoderTimes DecoderTimesBetween(const ops::GpuDecoderCounters& before, const ops::GpuDecoderCounters& after);

}  // namespace conveyor::cli
