// box_encoder on the GPU: the plain launcher between box_encoder_op.cc and box_encoder_gpu.cu (no
// CUDA syntax here). The matching rules are box_encoder.h's, computed with the CPU's expressions in
// the CPU's order and rounding (no fused multiply-adds), so labels and boxes equal EncodeBoxes's;
// only log() (rule 4 with offset: true, columns w and h) may differ in the last bit of a double,
// which reaches the float output as at most 1 ulp.
//
//   one launch per batch: a block per sample (grid = samples, which the capture signature holds)
//     1. encoded_labels[a] = -1 for every anchor (the output doubles as the table of forced matches)
//     2. boxes in input order: a block argmax over the anchors (first anchor on a tie); when its
//        IoU > 0, encoded_labels[best] = box index (a later box overwrites: rule 3)
//     3. each anchor: its forced box, else its best box (first box on a tie) when IoU > criteria,
//        else background; writes encoded [A, 4] and encoded_labels [A]
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::ops {

// One sample's device addresses, written per sample by PrepareGpu into the slot's descriptors.
struct BoxEncoderSample {
  const float* boxes;  // [count, 4] ltrb as given (the kernel clips them); null when count is 0
  const void* labels;  // [count] int32 or int64 (rank [N, 1] has the same bytes)
  int64_t count;
  float* out_boxes;  // [A, 4]
  void* out_labels;  // [A], the labels' dtype
};

// BoxEncoderParams on the device (uploaded once by the operator) and its scalar arguments.
struct BoxEncoderTable {
  const double* anchors;        // [A, 4] ltrb; 16-byte aligned
  const double* anchor_area;    // [A]
  const double* anchor_center;  // [A, 4] the anchor's (cx, cy, w, h) times scale (offset encoding)
  const float* background;      // [A, 4] rule 4's output of a background anchor
  int32_t num_anchors;
  bool offset;
  double criteria;
  double scale;
  double means[4];
  double stds[4];
};

// Encodes `num_samples` samples (`samples`: device or mapped memory) on `stream`: one kernel.
// `int64_labels`: labels in and out are int64 (else int32). Throws CudaError on a launch failure.
void BoxEncoderGpu(const BoxEncoderSample* samples, int num_samples, const BoxEncoderTable& table, bool int64_labels,
                   cuda::StreamView stream);

}  // namespace conveyor::ops
