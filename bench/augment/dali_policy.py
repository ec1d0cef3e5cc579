#!/usr/bin/env python3
"""DALI 2.4's auto_aug policies, the peer of Conveyor's auto_augment / rand_augment /
trivial_augment_wide in bench/augment/run.sh: the same files, the same stages as
bench/pipelines/augment_*.yaml, timed by the rule every contender uses (bench/e2e/common.py).

    dali_policy.py --policy none|auto_augment|auto_augment_reduced|rand_augment|trivial_augment_wide
                   --data DIR [common options]

| stage                | DALI                                                                      |
|----------------------|---------------------------------------------------------------------------|
| read, decode         | readers.file (random_shuffle), decoders.image device="mixed", RGB         |
| crop                 | random_resized_crop 224x224 (DALI's defaults: area [0.08, 1], aspect      |
|                      | [3/4, 4/3], linear, antialias), on the GPU                                |
| flip                 | flip(horizontal=random.coin_flip(0.5)), on the GPU                        |
| policy               | auto_aug.auto_augment.auto_augment_image_net(images) (auto_augment),      |
|                      | auto_augment(images, policy_name="reduced_image_net") (auto_augment_reduced),|
|                      | rand_augment.rand_augment(images, n=2, m=9) (31 bins), trivial_augment.   |
|                      | trivial_augment_wide(images) (31 bins); fill_value 128, linear warps:     |
|                      | DALI's defaults. No `shape`: translations in pixels (DALI's defaults),    |
|                      | which after the 224x224 crop match the relative ranges to within 2%       |
| normalize            | crop_mirror_normalize float32 CHW, ImageNet mean/std in 0..255 units      |

The pipeline is built with enable_conditionals=True (auto_aug selects operations per sample with
`if`). --cpu-smoke builds the same pipeline on the CPU (decoders.image device="cpu"), to check the
script; DALI's auto_aug is meant for GPU samples and may reject CPU ones (the row then says so).
"""
import argparse
import functools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import common  # noqa: E402

POLICIES = ["none", "auto_augment", "auto_augment_reduced", "rand_augment", "trivial_augment_wide"]


def policy_function(name):
    """The auto_aug call of policy `name` (None for "none"), resolved before the pipeline is traced:
    the traced function then holds no import and no string dispatch."""
    from nvidia.dali.auto_aug import auto_augment, rand_augment, trivial_augment
    return {
        "none": None,
        "auto_augment": auto_augment.auto_augment_image_net,
        "auto_augment_reduced": functools.partial(auto_augment.auto_augment, policy_name="reduced_image_net"),
        "rand_augment": functools.partial(rand_augment.rand_augment, n=2, m=9, num_magnitude_bins=31),
        "trivial_augment_wide": functools.partial(trivial_augment.trivial_augment_wide, num_magnitude_bins=31),
    }[name]


def build(args, gpu, fn, types, pipeline_def):
    policy = policy_function(args.policy)

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=0 if gpu else None, seed=1234,
                  prefetch_queue_depth=args.prefetch, enable_conditionals=True)
    def augment():
        jpegs, labels = fn.readers.file(file_root=args.data, random_shuffle=True, name="reader")
        images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=[common.CROP, common.CROP])
        images = fn.flip(images, horizontal=fn.random.coin_flip(probability=0.5))
        if policy is not None:
            images = policy(images)
        out = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=common.MEAN,
                                       std=common.STD)
        return out, labels

    return augment()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap, iterations=10, repeats=5, warmup=3)
    ap.add_argument("--policy", choices=POLICIES, required=True)
    args = ap.parse_args()
    gpu = not args.cpu_smoke
    common.apply_smoke(args, batch=8, threads=2, iterations=2, repeats=2, warmup=1)
    label = args.label or "dali %s" % args.policy
    try:
        from nvidia.dali import fn, pipeline_def, types
        import nvidia.dali.auto_aug  # noqa: F401  (present since DALI 1.24)
    except ImportError as e:
        return common.skip("dali", "cannot import nvidia.dali / nvidia.dali.auto_aug (stage it with "
                           "tools/stage_dali.sh and put its folder on PYTHONPATH): %s" % e, label)
    files = common.jpeg_files(args.data)
    pipe = build(args, gpu, fn, types, pipeline_def)
    pipe.build()
    state = {"out": None}

    def step():
        state["out"] = pipe.run()

    def sync():
        if gpu:
            state["out"][0].as_cpu()  # a host copy of the last batch: its GPU work is done

    figures = common.run_timed(step, sync, args.batch, -(-len(files) // args.batch), args)
    out = state["out"][0].as_cpu() if gpu else state["out"][0]
    t = out.as_tensor()
    common.emit({"contender": "dali", "label": label, "policy": args.policy, "device": "gpu" if gpu else "cpu",
                 "threads": args.threads, "prefetch": args.prefetch, "files": len(files),
                 "output_shape": list(t.shape()), "output_dtype": str(out.dtype),
                 "versions": common.versions("nvidia.dali", "nvidia.nvimgcodec", "numpy"), **figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
