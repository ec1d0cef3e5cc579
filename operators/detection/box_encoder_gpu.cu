// box_encoder's kernel (box_encoder_gpu.h has the passes). Exactness against EncodeBoxes
// (box_encoder_cpu.cc) rests on three things:
//   - every double operation is an explicitly rounded intrinsic (__dadd_rn, __dsub_rn, __dmul_rn,
//     __ddiv_rn), which nvcc never contracts into a fused multiply-add (the host code has none:
//     x86-64 without -mfma), and in the CPU's order of evaluation;
//   - std::min / std::max are spelled as their ternaries (std::max(a, b) is a < b ? b : a), so
//     even the sign of a zero follows the CPU;
//   - argmaxes keep the first index on a tie: strict > in index order within a thread, and the
//     smaller index when two equal IoUs meet in the block reduction.
// The anchor areas, the anchors' scaled centres and the background rows come from the host
// (BoxEncoderParams), bit for bit.
#include <climits>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/detection/box_encoder_gpu.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = 128;  // boxes staged in shared memory at a time (COCO: < 100 per image)

// A clipped box (boxes.h's rule) and its area; `used` is HasArea (boxes without area are skipped).
struct ClippedBox {
  double l, t, r, b, area;
  int used;
};

__device__ double Clip01(double v) {
  const double low = 0.0 < v ? v : 0.0;  // std::max(0.0, v)
  return low < 1.0 ? low : 1.0;          // std::min(1.0, low)
}

// ClipBox + HasArea + Area (boxes.cc) of the float ltrb box at `p`.
__device__ ClippedBox LoadBox(const float* p) {
  ClippedBox c{0.0, 0.0, 0.0, 0.0, 0.0, 0};
  const double l = p[0], t = p[1], r = p[2], b = p[3];
  if (isnan(l) || isnan(t) || isnan(r) || isnan(b)) return c;  // the empty box
  c.l = Clip01(l);
  c.t = Clip01(t);
  c.r = Clip01(r);
  c.b = Clip01(b);
  c.r = c.r < c.l ? c.l : c.r;  // std::max(r, l)
  c.b = c.b < c.t ? c.t : c.b;
  c.used = c.r > c.l && c.b > c.t;
  c.area = c.used ? __dmul_rn(__dsub_rn(c.r, c.l), __dsub_rn(c.b, c.t)) : 0.0;
  return c;
}

// Boxes of the chunk starting at `base`.
__device__ int ChunkSize(int64_t count, int64_t base) {
  return count - base < kChunk ? static_cast<int>(count - base) : kChunk;
}

struct Anchor {
  double l, t, r, b;
};

__device__ Anchor LoadAnchor(const double* anchors, int a) {
  const double2* p = reinterpret_cast<const double2*>(anchors) + 2 * static_cast<int64_t>(a);
  const double2 lt = __ldg(p), rb = __ldg(p + 1);
  return {lt.x, lt.y, rb.x, rb.y};
}

// Intersection(box, anchor) of box_encoder_cpu.cc: min / max as std::min(box, anchor) and
// std::max(box, anchor) evaluate them.
__device__ double Intersection(const ClippedBox& box, const Anchor& an) {
  const double right = an.r < box.r ? an.r : box.r;
  const double left = box.l < an.l ? an.l : box.l;
  const double bottom = an.b < box.b ? an.b : box.b;
  const double top = box.t < an.t ? an.t : box.t;
  const double w = __dsub_rn(right, left), h = __dsub_rn(bottom, top);
  return w > 0 && h > 0 ? __dmul_rn(w, h) : 0.0;
}

// inter / (box_area + anchor_area - inter), rounded as the CPU rounds it.
__device__ double IoU(double inter, double box_area, double anchor_area) {
  return __ddiv_rn(inter, __dsub_rn(__dadd_rn(box_area, anchor_area), inter));
}

// (iou, index) pairs: the higher IoU, the lower index on a tie.
__device__ void Better(double& iou, int& index, double other_iou, int other_index) {
  if (other_iou > iou || (other_iou == iou && other_index < index)) {
    iou = other_iou;
    index = other_index;
  }
}

// Block-wide argmax; the result is valid in thread 0. Ends with a barrier (the scratch is reused).
__device__ void BlockArgMax(double& iou, int& index, double* warp_iou, int* warp_index) {
  for (int offset = 16; offset > 0; offset /= 2) {
    Better(iou, index, __shfl_down_sync(0xffffffffu, iou, offset), __shfl_down_sync(0xffffffffu, index, offset));
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    warp_iou[warp] = iou;
    warp_index[warp] = index;
  }
  __syncthreads();
  if (warp == 0) {
    iou = lane < kWarps ? warp_iou[lane] : 0.0;
    index = lane < kWarps ? warp_index[lane] : INT_MAX;
    for (int offset = 16; offset > 0; offset /= 2) {
      Better(iou, index, __shfl_down_sync(0xffffffffu, iou, offset), __shfl_down_sync(0xffffffffu, index, offset));
    }
  }
  __syncthreads();
}

// Rule 4 for a matched anchor (EncodeOne of box_encoder_cpu.cc with the box as target).
__device__ void Encode(const BoxEncoderTable& t, int a, const ClippedBox& box, float* dst) {
  if (!t.offset) {
    // Center(box, 1.0): the factor 1.0 is exact and left out.
    dst[0] = __double2float_rn(__dmul_rn(0.5, __dadd_rn(box.l, box.r)));
    dst[1] = __double2float_rn(__dmul_rn(0.5, __dadd_rn(box.t, box.b)));
    dst[2] = __double2float_rn(__dsub_rn(box.r, box.l));
    dst[3] = __double2float_rn(__dsub_rn(box.b, box.t));
    return;
  }
  const double* an = t.anchor_center + 4 * static_cast<int64_t>(a);
  const double cx = __dmul_rn(__dmul_rn(0.5, __dadd_rn(box.l, box.r)), t.scale);
  const double cy = __dmul_rn(__dmul_rn(0.5, __dadd_rn(box.t, box.b)), t.scale);
  const double w = __dmul_rn(__dsub_rn(box.r, box.l), t.scale);
  const double h = __dmul_rn(__dsub_rn(box.b, box.t), t.scale);
  const double raw[4] = {__ddiv_rn(__dsub_rn(cx, an[0]), an[2]), __ddiv_rn(__dsub_rn(cy, an[1]), an[3]),
                         log(__ddiv_rn(w, an[2])), log(__ddiv_rn(h, an[3]))};
  for (int i = 0; i < 4; ++i) dst[i] = __double2float_rn(__ddiv_rn(__dsub_rn(raw[i], t.means[i]), t.stds[i]));
}

template <typename Label>
__global__ void __launch_bounds__(kThreads) BoxEncoderKernel(const BoxEncoderSample* samples, BoxEncoderTable t) {
  __shared__ ClippedBox boxes[kChunk];
  __shared__ double warp_iou[kWarps];
  __shared__ int warp_index[kWarps];
  const BoxEncoderSample s = samples[blockIdx.x];
  const int num_anchors = t.num_anchors;
  Label* out_labels = static_cast<Label*>(s.out_labels);
  const int64_t count = s.count;
  const int64_t chunks = (count + kChunk - 1) / kChunk;

  // 1. No forced match yet.
  for (int a = threadIdx.x; a < num_anchors; a += kThreads) out_labels[a] = Label(-1);

  // 2. Boxes in input order claim their best anchor (rule 3); thread 0 writes every claim, in
  //    order, so a later box's claim on the same anchor overwrites an earlier one.
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t base = c * kChunk;
    const int n = ChunkSize(count, base);
    __syncthreads();  // the previous chunk's readers are done (and step 1's writes are visible)
    if (threadIdx.x < n) boxes[threadIdx.x] = LoadBox(s.boxes + 4 * (base + threadIdx.x));
    __syncthreads();
    for (int k = 0; k < n; ++k) {
      const ClippedBox box = boxes[k];
      if (!box.used) continue;  // the same for every thread of the block
      double best_iou = 0.0;
      int best = INT_MAX;
      for (int a = threadIdx.x; a < num_anchors; a += kThreads) {
        const double inter = Intersection(box, LoadAnchor(t.anchors, a));
        if (!(inter > 0)) continue;
        const double iou = IoU(inter, box.area, __ldg(t.anchor_area + a));
        if (iou > best_iou) {
          best_iou = iou;
          best = a;
        }
      }
      BlockArgMax(best_iou, best, warp_iou, warp_index);
      if (threadIdx.x == 0 && best_iou > 0) out_labels[best] = static_cast<Label>(base + k);
    }
  }
  __syncthreads();

  // 3. Per anchor. Every thread runs every round (a chunk reload needs the whole block); with one
  //    chunk, step 2 left it in shared memory.
  const Label* labels = static_cast<const Label*>(s.labels);
  for (int round = 0; round < num_anchors; round += kThreads) {
    const int a = round + static_cast<int>(threadIdx.x);
    const bool active = a < num_anchors;
    int64_t match = active ? static_cast<int64_t>(out_labels[a]) : -1;
    const bool search = active && match < 0;
    const Anchor anchor = active ? LoadAnchor(t.anchors, a) : Anchor{0, 0, 0, 0};
    const double anchor_area = active ? __ldg(t.anchor_area + a) : 0.0;
    double best_iou = 0.0;
    int64_t best = -1;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t base = c * kChunk;
      const int n = ChunkSize(count, base);
      if (chunks > 1) {
        __syncthreads();
        if (threadIdx.x < n) boxes[threadIdx.x] = LoadBox(s.boxes + 4 * (base + threadIdx.x));
        __syncthreads();
      }
      if (!search) continue;
      for (int k = 0; k < n; ++k) {
        const ClippedBox& box = boxes[k];
        if (!box.used) continue;
        const double inter = Intersection(box, anchor);
        if (!(inter > 0)) continue;
        const double iou = IoU(inter, box.area, anchor_area);
        if (iou > best_iou) {  // strictly: the first box keeps a tie
          best_iou = iou;
          best = base + k;
        }
      }
    }
    if (!active) continue;
    if (search && best_iou > t.criteria) match = best;
    float* dst = s.out_boxes + 4 * static_cast<int64_t>(a);
    if (match < 0) {
      out_labels[a] = Label(0);
      const float4 bg = __ldg(reinterpret_cast<const float4*>(t.background) + a);
      dst[0] = bg.x;
      dst[1] = bg.y;
      dst[2] = bg.z;
      dst[3] = bg.w;
      continue;
    }
    out_labels[a] = labels[match];
    Encode(t, a, LoadBox(s.boxes + 4 * match), dst);
  }
}

}  // namespace

void BoxEncoderGpu(const BoxEncoderSample* samples, int num_samples, const BoxEncoderTable& table, bool int64_labels,
                   cuda::StreamView stream) {
  if (num_samples == 0) return;
  if (int64_labels) {
    BoxEncoderKernel<int64_t><<<num_samples, kThreads, 0, stream.get()>>>(samples, table);
  } else {
    BoxEncoderKernel<int32_t><<<num_samples, kThreads, 0, stream.get()>>>(samples, table);
  }
  CONVEYOR_CHECK_LAUNCH("BoxEncoderKernel");
}

}  // namespace conveyor::ops
