#!/usr/bin/env python3
"""PyTorch peers of pointwise_bench's transpose and color_space_conversion cases on the same GPU:
eager, torch.compile and (where it has the operation) torchvision v2, timed with CUDA events
(median of N runs), printed as a table.

Work (issue 10), batch 256 of 224x224 images:
  transpose  u8 HWC -> CHW, u8 CHW -> HWC, f32 HWC -> CHW (every byte read once, written once);
  color_space_conversion  u8 RGB -> YCbCr, u8 RGB -> GRAY, f32 YCbCr -> RGB (BT.601 full range).
torchvision v2 has no axis permutation or YCbCr conversion; its rgb_to_grayscale works on CHW
(same bytes, planar), so that row reads CHW input.
"""
import argparse

import torch

from peer_timing import one_launch_ms as time_ms

RGB_TO_YCC = torch.tensor([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])
YCC_OFFSET = torch.tensor([0.0, 128.0, 128.0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    dev = torch.device("cuda")
    n = args.batch
    hwc = torch.randint(0, 256, (n, 224, 224, 3), dtype=torch.uint8, device=dev)
    chw = hwc.permute(0, 3, 1, 2).contiguous()
    hwc_f = hwc.float()
    results = []

    def add(work, fn, nbytes, compile_too=True):
        results.append((work, "eager", time_ms(fn, args.reps), nbytes))
        if compile_too:
            results.append((work, "torch.compile", time_ms(torch.compile(fn), args.reps), nbytes))

    add("transpose u8 HWC->CHW", lambda: hwc.permute(0, 3, 1, 2).contiguous(), hwc.numel() * 2)
    add("transpose u8 CHW->HWC", lambda: chw.permute(0, 2, 3, 1).contiguous(), hwc.numel() * 2)
    add("transpose f32 HWC->CHW", lambda: hwc_f.permute(0, 3, 1, 2).contiguous(), hwc_f.numel() * 8)

    m, o = RGB_TO_YCC.to(dev), YCC_OFFSET.to(dev)
    inv = torch.linalg.inv(RGB_TO_YCC).to(dev)
    inv_o = -(inv @ YCC_OFFSET.to(dev))

    def ycc_u8():
        return (hwc.float() @ m.T + o).round().clamp(0, 255).to(torch.uint8)

    def gray_u8():
        return (hwc.float() @ m[0]).round().clamp(0, 255).to(torch.uint8).unsqueeze(-1)

    def rgb_f32():
        return hwc_f @ inv.T + inv_o

    add("color_space u8 RGB->YCbCr", ycc_u8, hwc.numel() * 2)
    add("color_space u8 RGB->GRAY", gray_u8, hwc.numel() * 4 // 3)
    add("color_space f32 YCbCr->RGB", rgb_f32, hwc_f.numel() * 8)
    try:
        import torchvision.transforms.v2.functional as F

        results.append(("color_space u8 RGB->GRAY (CHW)", "torchvision v2",
                        time_ms(lambda: F.rgb_to_grayscale(chw), args.reps), hwc.numel() * 4 // 3))
    except ImportError as e:
        print("torchvision not available:", e)

    results.append(("copy (clone) u8", "eager", time_ms(lambda: hwc.clone(), args.reps), hwc.numel() * 2))

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  batch {n}")
    print(f"{'work':34s} {'peer':16s} {'median ms':>10s} {'eff GB/s':>10s}")
    for work, peer, ms, nbytes in results:
        print(f"{work:34s} {peer:16s} {ms:10.4f} {nbytes / (ms * 1e-3) / 1e9:10.1f}")


if __name__ == "__main__":
    main()
