#!/usr/bin/env python3
"""PyTorch peers of tests/benchmarks/geometry_bench on the same GPU: eager, torch.compile and
torchvision v2, timed with CUDA events (median of N runs of one call, and per call of 10 back to back),
printed as a table.

Work (issue 10), 256 images 375x500x3 uint8 (HWC in memory, as Conveyor's input):
  resize -> 224x224 bilinear, antialias off / on (uint8 out: round and clamp)
  random_resized_crop -> 224x224 bilinear antialiased (torchvision's window distribution)
  crop 224x224 centred; flip horizontal, every other sample also vertical
Minimal bytes: the input the work must read once + the output written once (same as the C++
benchmark's eff_GBps). The peers work in NCHW as PyTorch does; the permute of the HWC batch is
part of the timed work where the op needs it (Conveyor consumes HWC directly).
"""
import argparse

import torch
import torch.nn.functional as TF

from peer_timing import time_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256)
    args, _ = ap.parse_known_args()  # device_check.sh may pass an image folder; unused here
    dev = torch.device("cuda")
    n, H, W, C, S = args.batch, 375, 500, 3, 224
    imgs = torch.randint(0, 256, (n, H, W, C), dtype=torch.uint8, device=dev)
    results = []
    slow_reps = max(5, args.reps // 10)

    def add(work, peer, fn, nbytes, reps=args.reps):
        try:
            results.append((work, peer, time_ms(fn, reps), nbytes))
        except Exception as e:  # a peer that fails (e.g. torch.compile unavailable) is reported, not fatal
            print(f"{work} / {peer}: failed: {type(e).__name__}: {e}")

    resize_bytes = n * H * W * C + n * S * S * C
    for aa in (False, True):
        work = f"resize 375x500->224 linear aa={int(aa)}"

        def resize_eager(aa=aa):
            x = imgs.permute(0, 3, 1, 2).float()
            y = TF.interpolate(x, size=(S, S), mode="bilinear", align_corners=False, antialias=aa)
            return y.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous()

        add(work, "eager", resize_eager, resize_bytes)
        add(work, "torch.compile", torch.compile(resize_eager), resize_bytes)
        try:
            import torchvision.transforms.v2.functional as F

            def resize_tv(aa=aa):
                return F.resize(imgs.permute(0, 3, 1, 2), [S, S], antialias=aa)  # uint8 in, uint8 out

            add(work, "torchvision v2", resize_tv, resize_bytes)
        except ImportError as e:
            print("torchvision not available:", e)

    try:
        import torchvision.transforms.v2.functional as F
        from torchvision.transforms import v2

        torch.manual_seed(1234)
        chw = imgs.permute(0, 3, 1, 2)
        windows = [v2.RandomResizedCrop.get_params(chw[0], scale=[0.08, 1.0], ratio=[3 / 4, 4 / 3]) for _ in range(n)]
        rrc_bytes = sum(h * w * C for (_, _, h, w) in windows) + n * S * S * C

        def rrc_tv():
            return torch.stack([F.resized_crop(chw[i], t, l, h, w, [S, S], antialias=True)
                                for i, (t, l, h, w) in enumerate(windows)])

        def rrc_eager():
            out = []
            for i, (t, l, h, w) in enumerate(windows):
                x = imgs[i, t:t + h, l:l + w].permute(2, 0, 1).unsqueeze(0).float()
                out.append(TF.interpolate(x, size=(S, S), mode="bilinear", align_corners=False, antialias=True))
            return torch.cat(out).round_().clamp_(0, 255).to(torch.uint8)

        add("random_resized_crop 224 linear aa", "eager (per image)", rrc_eager, rrc_bytes, slow_reps)
        add("random_resized_crop 224 linear aa", "torchvision v2", rrc_tv, rrc_bytes, slow_reps)
        # torch.compile of a per-image loop with 256 distinct window shapes recompiles per shape: not a fair peer.
    except ImportError as e:
        print("torchvision not available:", e)

    y0, x0 = round(0.5 * (H - S)), round(0.5 * (W - S))
    crop_bytes = 2 * n * S * S * C

    def crop_eager():
        return imgs[:, y0:y0 + S, x0:x0 + S].contiguous()

    add("crop 224 centred", "eager", crop_eager, crop_bytes)
    add("crop 224 centred", "torch.compile", torch.compile(crop_eager), crop_bytes)
    try:
        import torchvision.transforms.v2.functional as F

        add("crop 224 centred", "torchvision v2", lambda: F.center_crop(imgs.permute(0, 3, 1, 2), [S, S]).contiguous(),
            crop_bytes)
    except ImportError:
        pass

    flip_bytes = 2 * n * H * W * C
    odd = torch.tensor([i % 2 == 1 for i in range(n)], device=dev).view(n, 1, 1, 1)

    def flip_eager():
        x = imgs.flip(2)
        return torch.where(odd, x.flip(1), x)

    add("flip h (+v every other)", "eager", flip_eager, flip_bytes)
    add("flip h (+v every other)", "torch.compile", torch.compile(flip_eager), flip_bytes)
    try:
        import torchvision.transforms.v2.functional as F

        def flip_tv():
            x = F.horizontal_flip(imgs.permute(0, 3, 1, 2))
            return torch.cat([F.vertical_flip(x[1::2]), x[0::2]])  # order aside, the same work

        add("flip h (+v every other)", "torchvision v2", flip_tv, flip_bytes)
    except ImportError:
        pass

    add("copy (clone) of the input", "eager", lambda: imgs.clone(), 2 * imgs.numel())

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  batch {n}")
    print(f"{'work':40s} {'peer':18s} {'median ms':>10s} {'eff GB/s':>10s} {'b2b ms':>10s} {'b2b GB/s':>10s}")
    for work, peer, (ms, b2b), nbytes in results:
        print(f"{work:40s} {peer:18s} {ms:10.4f} {nbytes / (ms * 1e-3) / 1e9:10.1f} {b2b:10.4f} {nbytes / (b2b * 1e-3) / 1e9:10.1f}")


if __name__ == "__main__":
    main()
