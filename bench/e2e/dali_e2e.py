#!/usr/bin/env python3
"""NVIDIA DALI 2.4, the peer Conveyor must beat, on the same files with the same output, timed by
the same rule (common.py). DALI comes from PYTHONPATH (tools/stage_dali.sh installs it into
/root/dali_site on the GPU machine); without it the row is reported as skipped.

    dali_e2e.py --mode fused|unfused|decode --data DIR [--hw-load X] [common options]
    dali_e2e.py --mode overhead [--blocks 15 --block-iterations 2000]
    dali_e2e.py ... --cpu-smoke            # tiny run with CPU operators: checks the script here

| mode     | pipeline (device="mixed" decoding, GPU operators after it)                            |
|----------|----------------------------------------------------------------------------------------|
| fused    | readers.file -> decoders.image_random_crop -> resize 224x224 -> crop_mirror_normalize  |
| unfused  | readers.file -> decoders.image -> random_resized_crop 224x224 -> crop_mirror_normalize |
| decode   | readers.file -> decoders.image                                                          |
| overhead | random.uniform [16] -> .gpu() -> 10 casts (float16/float32), batch 1; us per pipe.run() |

crop_mirror_normalize: float16, CHW, ImageNet mean/std in 0..255 units, mirror = coin_flip(0.5) —
the same output as bench/pipelines/train_*.yaml. Window distribution: DALI's defaults (area
[0.08, 1], aspect [3/4, 4/3]), which Conveyor's defaults copy. Resizing: DALI's defaults (linear,
antialias), as Conveyor's. hw_decoder_load: DALI's default unless --hw-load is given.
num_threads and prefetch_queue_depth: --threads / --prefetch, matched to Conveyor's run.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def build_train(args, gpu, fn, types, pipeline_def):
    dec = "mixed" if gpu else "cpu"
    op = "gpu" if gpu else "cpu"
    extra = {} if args.hw_load is None or not gpu else {"hw_decoder_load": args.hw_load}

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=0 if gpu else None, seed=1234,
                  prefetch_queue_depth=args.prefetch)
    def train():
        jpegs, labels = fn.readers.file(file_root=args.data, random_shuffle=True, name="reader")
        if args.mode == "fused":
            images = fn.decoders.image_random_crop(jpegs, device=dec, output_type=types.RGB, **extra)
            images = fn.resize(images, device=op, resize_x=common.CROP, resize_y=common.CROP)
        elif args.mode == "unfused":
            images = fn.decoders.image(jpegs, device=dec, output_type=types.RGB, **extra)
            images = fn.random_resized_crop(images, device=op, size=[common.CROP, common.CROP])
        else:
            return fn.decoders.image(jpegs, device=dec, output_type=types.RGB, **extra), labels
        mirror = fn.random.coin_flip(probability=0.5)
        out = fn.crop_mirror_normalize(images, device=op, dtype=types.FLOAT16, output_layout="CHW",
                                       crop=(common.CROP, common.CROP), mean=common.MEAN, std=common.STD,
                                       mirror=mirror)
        return out, labels

    return train()


def build_overhead(args, gpu, fn, types, pipeline_def):
    @pipeline_def(batch_size=1, num_threads=1, device_id=0 if gpu else None, seed=1, prefetch_queue_depth=2)
    def tiny():
        x = fn.random.uniform(range=[0.0, 1.0], shape=[16])
        if gpu:
            x = x.gpu()
        for i in range(10):
            x = fn.cast(x, dtype=types.FLOAT16 if i % 2 == 0 else types.FLOAT)
        return x

    return tiny()


def host_wait(outputs, gpu):
    """Blocks until the iteration's GPU work is done (a copy to the host of its first output)."""
    if gpu:
        outputs[0].as_cpu()


def describe(out):
    t = out.as_tensor() if out.is_dense_tensor() else None
    return (list(t.shape()) if t is not None else [len(out)] + list(out[0].shape())), str(out.dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("--mode", choices=["fused", "unfused", "decode", "overhead"], default="fused")
    ap.add_argument("--hw-load", type=float, default=None, help="decoders' hw_decoder_load (default: DALI's)")
    ap.add_argument("--blocks", type=int, default=15)
    ap.add_argument("--block-iterations", type=int, default=2000)
    args = ap.parse_args()
    gpu = not args.cpu_smoke
    common.apply_smoke(args, batch=8, threads=2, iterations=2, repeats=2, warmup=1, blocks=2, block_iterations=50)
    label = args.label or "dali %s" % args.mode
    try:
        import nvidia.dali as dali
        from nvidia.dali import fn, pipeline_def, types
    except ImportError as e:
        return common.skip("dali", "cannot import nvidia.dali (stage it with tools/stage_dali.sh and put "
                           "its folder on PYTHONPATH): %s" % e, label)
    result = {"contender": "dali", "label": label, "mode": args.mode, "device": "gpu" if gpu else "cpu",
              "threads": args.threads, "prefetch": args.prefetch,
              "hw_decoder_load": "default" if args.hw_load is None else args.hw_load,
              "versions": common.versions("nvidia.dali", "nvidia.nvimgcodec", "numpy")}
    if args.mode == "overhead":
        pipe = build_overhead(args, gpu, fn, types, pipeline_def)
        pipe.build()
        for _ in range(500):
            out = pipe.run()
        host_wait(out, gpu)
        blocks = []
        clock = common.CpuClock()
        cpu0, wall = clock.seconds(), 0.0
        for _ in range(args.blocks):
            start = time.perf_counter()
            for _ in range(args.block_iterations):
                out = pipe.run()
            host_wait(out, gpu)
            elapsed = time.perf_counter() - start
            wall += elapsed
            blocks.append(elapsed / args.block_iterations * 1e6)
        result.update(us_per_iteration=round(statistics.median(blocks), 2),
                      us_per_iteration_min=round(min(blocks), 2), us_per_iteration_max=round(max(blocks), 2),
                      blocks_us=[round(b, 2) for b in blocks], block_iterations=args.block_iterations,
                      cpu_cores_busy=round((clock.seconds() - cpu0) / max(wall, 1e-9), 2), batch=1, ops=10)
        common.emit(result)
        return 0

    files = common.jpeg_files(args.data)
    pipe = build_train(args, gpu, fn, types, pipeline_def)
    pipe.build()
    state = {"out": None}

    def step():
        state["out"] = pipe.run()

    figures = common.run_timed(step, lambda: host_wait(state["out"], gpu), args.batch,
                               -(-len(files) // args.batch), args)
    shape, dtype = describe(state["out"][0].as_cpu() if gpu else state["out"][0])
    result.update(figures, files=len(files), output_shape=shape, output_dtype=dtype)
    common.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
