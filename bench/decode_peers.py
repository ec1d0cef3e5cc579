#!/usr/bin/env python3
"""Peer figure for decode_gpu_bench: torchvision.io.decode_jpeg(list, device="cuda") (batched
nvJPEG) on the same folder of JPEGs, batch 256, images/s, as RGB (grayscale JPEGs expanded, as
the other decoders' output_type RGB). Files that are no JPEG whatever their name (the realistic
set's PNG) are left out and counted ("not_jpeg"). Prints one JSON line.

    python3 bench/decode_peers.py /data/photos [--batch 256] [--seconds 5]
"""
import argparse
import json
import pathlib
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    try:
        import torch
        import torchvision
        from torchvision.io import decode_jpeg
    except ImportError as e:  # the GPU machine has them; say so elsewhere
        print(json.dumps({"peer": "torchvision", "skipped": str(e)}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"peer": "torchvision", "skipped": "no CUDA device"}))
        return 0
    files = sorted(p for p in pathlib.Path(args.folder).rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    if len(files) < args.batch:
        print(f"need >= {args.batch} JPEGs in {args.folder}, found {len(files)}", file=sys.stderr)
        return 1
    data = [torchvision.io.read_file(str(p)) for p in files]
    jpegs = [d for d in data if d.numel() >= 2 and int(d[0]) == 0xFF and int(d[1]) == 0xD8]
    not_jpeg, data = len(data) - len(jpegs), jpegs
    if len(data) < args.batch:
        print(f"need >= {args.batch} JPEGs in {args.folder}, found {len(data)}", file=sys.stderr)
        return 1
    rgb = torchvision.io.ImageReadMode.RGB
    batches = [data[i:i + args.batch] for i in range(0, len(data) - args.batch + 1, args.batch)]
    for b in batches[:2]:  # warm-up: nvJPEG handles and buffers
        decode_jpeg(b, device="cuda", mode=rgb)
    torch.cuda.synchronize()
    images, start, k = 0, time.perf_counter(), 0
    while time.perf_counter() - start < args.seconds:
        decode_jpeg(batches[k % len(batches)], device="cuda", mode=rgb)
        images += args.batch
        k += 1
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(json.dumps({"peer": "torchvision.io.decode_jpeg(device=cuda)", "torchvision": torchvision.__version__,
                      "device": torch.cuda.get_device_name(), "batch": args.batch, "files": len(data),
                      "not_jpeg": not_jpeg, "images_per_s": round(images / elapsed, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
