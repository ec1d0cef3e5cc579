#!/usr/bin/env python3
"""PyTorch peers of tests/benchmarks/pointwise_bench on the same GPU: eager, torch.compile and
torchvision v2, timed with CUDA events (median of N runs of one call, and per call of 10 back to back),
printed as a table.

Work (issue 10): crop_mirror_normalize — 256 x 256x256x3 uint8 HWC → 224x224 crop (anchors
varying), every other sample mirrored, normalized, float16 CHW; normalize u8 → f32; cast u8 → f16.
Minimal bytes: the window read once + the output written once.
"""
import argparse

import torch

from peer_timing import time_ms

MEAN = torch.tensor([123.675, 116.28, 103.53])
STD = torch.tensor([58.395, 57.12, 57.375])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    dev = torch.device("cuda")
    n, H, W, h, w = args.batch, 256, 256, 224, 224
    imgs = torch.randint(0, 256, (n, H, W, 3), dtype=torch.uint8, device=dev)
    mean, inv_std = MEAN.to(dev).view(1, 3, 1, 1), (1.0 / STD).to(dev).view(1, 3, 1, 1)
    y0 = [(i * 7) % (H - h + 1) for i in range(n)]
    x0 = [(i * 13) % (W - w + 1) for i in range(n)]
    mirror = torch.tensor([i % 2 == 1 for i in range(n)], device=dev)
    # Gather indices for a batched crop with per-sample anchors (one gather, no Python loop).
    rows = (torch.tensor(y0, device=dev).view(n, 1) + torch.arange(h, device=dev).view(1, h))
    cols = (torch.tensor(x0, device=dev).view(n, 1) + torch.arange(w, device=dev).view(1, w))
    cols = torch.where(mirror.view(n, 1), cols.flip(1), cols)
    bidx = torch.arange(n, device=dev).view(n, 1, 1)

    def cmn_eager():
        win = imgs[bidx, rows.view(n, h, 1), cols.view(n, 1, w)]  # n, h, w, 3
        x = win.permute(0, 3, 1, 2).float()
        return ((x - mean) * inv_std).half()

    cmn_compiled = torch.compile(cmn_eager)

    results = []
    min_bytes = n * h * w * 3 * (1 + 2)
    results.append(("crop_mirror_normalize u8->f16 CHW", "eager", time_ms(cmn_eager, args.reps), min_bytes))
    results.append(("crop_mirror_normalize u8->f16 CHW", "torch.compile", time_ms(cmn_compiled, args.reps), min_bytes))
    try:
        from torchvision.transforms import v2
        import torchvision.transforms.v2.functional as F

        def cmn_tv():
            x = imgs.permute(0, 3, 1, 2)  # torchvision wants CHW
            out = []
            for i in range(n):  # per-sample anchors and flips: torchvision works per image
                c = F.crop(x[i], y0[i], x0[i], h, w)
                if i % 2:
                    c = F.horizontal_flip(c)
                out.append(c)
            b = F.to_dtype(torch.stack(out), torch.float32, scale=False)
            return F.normalize(b, MEAN.tolist(), STD.tolist()).half()

        results.append(("crop_mirror_normalize u8->f16 CHW", "torchvision v2", time_ms(cmn_tv, max(5, args.reps // 10)), min_bytes))
    except ImportError as e:
        print("torchvision not available:", e)

    flat = torch.randint(0, 256, (n, 224, 224, 3), dtype=torch.uint8, device=dev)
    m3, s3 = MEAN.to(dev), (1.0 / STD).to(dev)

    def norm_eager():
        return (flat.float() - m3) * s3

    results.append(("normalize u8->f32 HWC", "eager", time_ms(norm_eager, args.reps), flat.numel() * 5))
    results.append(("normalize u8->f32 HWC", "torch.compile", time_ms(torch.compile(norm_eager), args.reps), flat.numel() * 5))

    def cast_eager():
        return flat.half()

    results.append(("cast u8->f16", "eager", time_ms(cast_eager, args.reps), flat.numel() * 3))

    def copy():
        return flat.clone()

    results.append(("copy (clone) u8", "eager", time_ms(copy, args.reps), flat.numel() * 2))

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  batch {n}")
    print(f"{'work':38s} {'peer':16s} {'median ms':>10s} {'eff GB/s':>10s} {'b2b ms':>10s} {'b2b GB/s':>10s}")
    for work, peer, (ms, b2b), nbytes in results:
        print(f"{work:38s} {peer:16s} {ms:10.4f} {nbytes / (ms * 1e-3) / 1e9:10.1f} {b2b:10.4f} {nbytes / (b2b * 1e-3) / 1e9:10.1f}")


if __name__ == "__main__":
    main()
