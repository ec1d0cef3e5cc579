#!/usr/bin/env python3
"""PyTorch peers of tests/benchmarks/augment_bench (issue 38) on the same GPU: torchvision v2
(eager, on CUDA tensors), plain torch eager and torch.compile, timed with CUDA events
(peer_timing.py: median of one call between two events, and per call of k back to back). Prints
one JSON object per (op, peer) line; the `op` names are augment_bench's benchmark names, so
bench/augment/results.py sets each beside Conveyor's kernel.

    augment_peers.py [--batch 256] [--reps 30] [--deadline 90] [--no-compile] [--only SUBSTRING]

Work: 256 x 224x224x3 uint8 images, held as the NCHW uint8 CUDA batch torchvision works on;
minimal bytes = the batch read once + written once, as the C++ benchmark counts them.
- "torchvision v2": the functional op on the whole batch, ONE parameter for all 256 images
  (torchvision draws once per call): a lower bound for per-sample work.
- "torchvision v2 (per image)": the op called on each image with its own parameter (what a
  per-sample augmentation costs in torchvision); the policies (AutoAugment / RandAugment /
  TrivialAugmentWide transforms) are measured this way, and once on the whole batch.
- "eager" / "torch.compile": a batched formulation in plain torch with per-sample parameters
  (affine_grid + grid_sample for warps, depthwise conv2d for filters, masks for erase / grid_mask,
  ...). All eager peers run first; torch.compile peers (a compile each, seconds) run after them
  while --deadline allows; a peer not started in time prints {"skipped": ...}.
"""
import argparse
import json
import math
import sys
import time

START = time.monotonic()


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--deadline", type=float, default=90, help="start no peer after this many seconds")
    ap.add_argument("--no-compile", action="store_true", help="leave out the torch.compile peers")
    ap.add_argument("--only", default="", help="only ops whose name contains this")
    args = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError as e:
        emit({"skipped": "augment_peers.py needs torch and torchvision: %s" % e})
        return 0
    if not torch.cuda.is_available():
        emit({"skipped": "augment_peers.py: no CUDA device visible to torch"})
        return 0
    from peer_timing import b2b_ms, one_launch_ms
    ops = make_ops(torch, args.batch)
    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "torchvision": torchvision.__version__,
            "batch": args.batch}
    nbytes = 2 * args.batch * 3 * 224 * 224
    runs = [(op, peer, fn, note, slow) for op, peer, fn, note, slow in ops if args.only in op]
    eager = [r for r in runs if r[1] != "torch.compile"]
    compiled = [] if args.no_compile else [r for r in runs if r[1] == "torch.compile"]
    for op, peer, fn, note, slow in eager + compiled:
        base = dict(info, op=op, peer=peer, note=note, bytes=nbytes)
        elapsed = time.monotonic() - START
        if elapsed > args.deadline:
            emit(dict(base, skipped="not started: %.0f s spent of the %.0f s deadline" % (elapsed, args.deadline)))
            continue
        try:
            f = torch.compile(fn, dynamic=False) if peer == "torch.compile" else fn
            t0 = time.monotonic()
            ms = one_launch_ms(f, 3 if slow else args.reps)  # its first, untimed call compiles
            b2b = b2b_ms(f, k=2, timings=3) if slow else b2b_ms(f)
            emit(dict(base, ms=round(ms, 5), b2b_ms=round(b2b, 5), eff_GBps=round(nbytes / (ms * 1e-3) / 1e9, 1),
                      b2b_eff_GBps=round(nbytes / (b2b * 1e-3) / 1e9, 1), wall_s=round(time.monotonic() - t0, 2)))
        except Exception as e:  # a peer that fails (an op torch.compile cannot take) is reported, not fatal
            emit(dict(base, error="%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")))
    return 0


def make_ops(torch, n):
    """(op, peer, fn, note, slow) for every peer; `slow`: per-image loops, timed with fewer calls."""
    import torch.nn.functional as TF
    import torchvision.transforms.v2.functional as F
    from torchvision.transforms import InterpolationMode, v2

    dev = torch.device("cuda")
    H = W = 224
    gen = torch.Generator(device=dev).manual_seed(7)
    x = torch.randint(0, 256, (n, 3, H, W), dtype=torch.uint8, device=dev, generator=gen)
    images = list(x.unbind(0))

    def spread(lo, hi):  # a per-sample parameter, as augment_bench's Spread
        i = torch.arange(n, device=dev, dtype=torch.float32)
        return (lo + (hi - lo) * ((i * 37) % n) / (n - 1)).view(n, 1, 1, 1)

    def per_image(lo, hi):
        return [lo + (hi - lo) * ((i * 37) % n) / (n - 1) for i in range(n)]

    def to_u8(y):
        return y.round().clamp(0, 255).to(torch.uint8)

    ys = torch.arange(H, device=dev, dtype=torch.float32).view(1, 1, H, 1)
    xs = torch.arange(W, device=dev, dtype=torch.float32).view(1, 1, 1, W)
    out = []

    def add(op, fn, note, eager=True, compile_too=True, tv=None, tv_note="", tv_each=None, tv_each_note=""):
        if tv is not None:
            out.append((op, "torchvision v2", tv, tv_note or "one parameter for the whole batch", False))
        if tv_each is not None:
            out.append((op, "torchvision v2 (per image)", tv_each, tv_each_note or "each image its own parameter", True))
        if fn is not None and eager:
            out.append((op, "eager", fn, note, False))
        if fn is not None and compile_too:
            out.append((op, "torch.compile", fn, note, False))

    # ---- geometry ---------------------------------------------------------------------------------
    def warp(theta, mode):
        def run():
            grid = TF.affine_grid(theta, (n, 3, H, W), align_corners=False)
            y = TF.grid_sample(x.float() - 128, grid, mode=mode, padding_mode="zeros", align_corners=False)
            return to_u8(y + 128)  # fill 128
        return run

    shear = spread(-0.3, 0.3).view(n)
    one, zero = torch.ones(n, device=dev), torch.zeros(n, device=dev)
    theta_shear = torch.stack([torch.stack([one, shear, zero], 1), torch.stack([zero, one, zero], 1)], 1)
    angle = spread(-30, 30).view(n) * math.pi / 180
    c, s = torch.cos(angle), torch.sin(angle)
    theta_rot = torch.stack([torch.stack([c, -s, zero], 1), torch.stack([s, c, zero], 1)], 1)
    shears, angles = per_image(-0.3, 0.3), per_image(-30, 30)
    bil, near = InterpolationMode.BILINEAR, InterpolationMode.NEAREST
    add("warp_affine_shear_linear", warp(theta_shear, "bilinear"), "affine_grid + grid_sample, per-sample matrix",
        tv=lambda: F.affine(x, angle=0.0, translate=[0, 0], scale=1.0, shear=[17.0, 0.0], interpolation=bil, fill=128),
        tv_each=lambda: [F.affine(im, angle=0.0, translate=[0, 0], scale=1.0, shear=[math.degrees(math.atan(sh)), 0.0],
                                  interpolation=bil, fill=128) for im, sh in zip(images, shears)])
    add("rotate_linear_keep_size", warp(theta_rot, "bilinear"), "affine_grid + grid_sample, per-sample angle",
        tv=lambda: F.rotate(x, 15.0, interpolation=bil, fill=128),
        tv_each=lambda: [F.rotate(im, a, interpolation=bil, fill=128) for im, a in zip(images, angles)])
    add("rotate_nearest_keep_size", warp(theta_rot, "nearest"), "affine_grid + grid_sample nearest, per-sample angle",
        tv=lambda: F.rotate(x, 15.0, interpolation=near, fill=128))
    hw = torch.arange(H * W, device=dev)
    py, px = hw // W, hw % W

    def jitter():
        dy = torch.randint(-1, 2, (n, H * W), device=dev)
        dx = torch.randint(-1, 2, (n, H * W), device=dev)
        src = (py + dy).clamp(0, H - 1) * W + (px + dx).clamp(0, W - 1)
        return x.view(n, 3, H * W).gather(2, src.unsqueeze(1).expand(n, 3, H * W)).view(n, 3, H, W)
    add("jitter_n2", jitter, "random offsets in [-1, 1] per pixel, gather")

    # ---- colour -------------------------------------------------------------------------------------
    hue = spread(-0.08, 0.08).view(n)
    ch, sh = torch.cos(hue * math.pi), torch.sin(hue * math.pi)
    matrix = torch.stack([torch.stack([ch, -sh, zero], 1), torch.stack([sh, ch, zero], 1),
                          torch.stack([zero, zero, one], 1)], 1) * spread(0.8, 1.2).view(n, 1, 1)
    add("hsv_hue_saturation_color_twist", lambda: to_u8(torch.einsum("nij,njhw->nihw", matrix, x.float())),
        "a 3x3 colour matrix per sample (einsum)",
        tv=lambda: F.adjust_brightness(F.adjust_saturation(F.adjust_hue(x, 0.05), 1.2), 0.9),
        tv_note="adjust_hue + adjust_saturation + adjust_brightness, one parameter each for the batch")
    luma = torch.tensor([0.299, 0.587, 0.114], device=dev).view(1, 3, 1, 1)
    add("grayscale", lambda: to_u8((x.float() * luma).sum(1, keepdim=True)).expand(n, 3, H, W).contiguous(),
        "BT.601 weights, 3 channels out", tv=lambda: F.rgb_to_grayscale(x, num_output_channels=3))
    gamma = spread(0.5, 2.0)
    add("gamma", lambda: to_u8(255 * (x.float() / 255) ** gamma), "per-sample gamma",
        tv=lambda: F.adjust_gamma(x, 0.8))
    thr = spread(0, 255)
    add("solarize", lambda: torch.where(x.float() >= thr, 255 - x, x), "per-sample threshold",
        tv=lambda: F.solarize(x, 128))
    bits = torch.tensor([(0xFF00 >> (1 + i % 8)) & 0xFF for i in range(n)], dtype=torch.uint8, device=dev).view(n, 1, 1, 1)
    add("posterize", lambda: x & bits, "per-sample mask", tv=lambda: F.posterize(x, 4))
    mul = spread(0.5, 1.5)
    add("brightness_contrast", lambda: to_u8(x.float() * mul + 128 * (1 - mul)), "per-sample factor about 128",
        tv=lambda: F.adjust_brightness(x, 1.2), tv_note="adjust_brightness (adjust_contrast adds a grey mean)")
    add("equalize", None, "", tv=lambda: F.equalize(x), tv_note="per-image histograms, batched")
    add("auto_contrast", None, "", tv=lambda: F.autocontrast(x), tv_note="per-image min/max, batched")

    # ---- filters ------------------------------------------------------------------------------------
    def depthwise(k):
        w = torch.full((3, 1, k, k), -1.0 / (k * k), device=dev)
        w[:, :, k // 2, k // 2] += 2.0
        return lambda: to_u8(TF.conv2d(TF.pad(x.float(), [k // 2] * 4, mode="reflect"), w, groups=3))
    add("sharpness", None, "", tv=lambda: F.adjust_sharpness(x, 1.5),
        tv_each=lambda: [F.adjust_sharpness(im, f) for im, f in zip(images, per_image(0.1, 1.9))])
    add("gaussian_blur_sigma1", None, "", tv=lambda: F.gaussian_blur(x, [7, 7], [1.0, 1.0]),
        tv_note="kernel 7 (radius 3, as ours at sigma 1), reflect")
    add("gaussian_blur_sigma3", None, "", tv=lambda: F.gaussian_blur(x, [19, 19], [3.0, 3.0]),
        tv_note="kernel 19 (radius 9, as ours at sigma 3), reflect")
    add("filter_3x3", depthwise(3), "depthwise conv2d, reflect-101 padding, float32")
    add("filter_7x7", depthwise(7), "depthwise conv2d, reflect-101 padding, float32")

    # ---- noise, erase, grid_mask, math ----------------------------------------------------------------
    std = spread(5, 25)
    add("noise_gaussian", lambda: to_u8(x.float() + torch.randn(x.shape, device=dev) * std), "per-sample stddev",
        tv=lambda: F.to_dtype(F.gaussian_noise(F.to_dtype(x, torch.float32, scale=True), sigma=0.06), torch.uint8,
                              scale=True),
        tv_note="gaussian_noise needs float: to_dtype + gaussian_noise + to_dtype")
    prob = spread(0.01, 0.1)

    def salt_and_pepper():
        r, salt = torch.rand((n, 1, H, W), device=dev), torch.rand((n, 1, H, W), device=dev) < 0.5
        return torch.where(r < prob, torch.where(salt, 255, 0).to(torch.uint8), x)
    add("noise_salt_and_pepper", salt_and_pepper, "per-pixel draws, per-sample probability")
    factor = spread(1, 20)
    add("noise_shot", lambda: to_u8(torch.poisson(x.float() / factor) * factor), "torch.poisson, per-sample factor")
    eh = spread(48, 168).floor()
    ew = (8400 / eh).floor()
    i = torch.arange(n, device=dev).view(n, 1, 1, 1)
    ey, ex = (i * 13) % (H - eh + 1), (i * 29) % (W - ew + 1)
    add("erase_one_region", lambda: torch.where((ys >= ey) & (ys < ey + eh) & (xs >= ex) & (xs < ex + ew), 0, x),
        "a mask from per-sample rectangles", tv=lambda: F.erase(x, 40, 50, 90, 93, torch.tensor(0, dtype=torch.uint8)),
        tv_note="one rectangle for the whole batch")
    ga = spread(0, 0.8)
    gc, gs, gshift = torch.cos(ga), torch.sin(ga), spread(0, 56)

    def grid_mask():
        u = (gc * xs + gs * ys + gshift) / 56
        v = (-gs * xs + gc * ys) / 56
        return torch.where((u - u.floor() < 0.5) & (v - v.floor() < 0.5), 0, x)
    add("grid_mask", grid_mask, "rotated grid mask per sample")
    scale = spread(0.5, 1.5)
    add("math_clamp_affine", lambda: (x.float() * scale + 10).clamp(0, 255).to(torch.uint8), "clamp(x * s0 + 10, 0, 255)")

    # ---- policies (torchvision's transforms: interpolation bilinear, fill 128, as ours in the bench) --
    policies = {
        "auto_augment_image_net": v2.AutoAugment(v2.AutoAugmentPolicy.IMAGENET, interpolation=bil, fill=128),
        "rand_augment_n2_m9": v2.RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=bil, fill=128),
        "trivial_augment_wide": v2.TrivialAugmentWide(num_magnitude_bins=31, interpolation=bil, fill=128),
    }
    for op, t in policies.items():
        add(op, None, "", tv=lambda t=t: t(x), tv_note="one draw for the whole batch (torchvision draws per call)",
            tv_each=lambda t=t: [t(im) for im in images], tv_each_note="each image its own draw, as the operator")
    out.append(("copy (clone) of the batch", "eager", lambda: x.clone(), "the D2D copy peers are measured against", False))
    return out


if __name__ == "__main__":
    sys.exit(main())
