#!/usr/bin/env python3
"""Conveyor's video pipeline (bench/pipelines/video_bench.yaml) through Python, as a training loop
drives it: iterating conveyor.Pipeline (outputs() then run()), holding only the current batch,
timed by the end-to-end suite's rule (video_common.py). The C++ row of the same pipeline is
`conveyor bench` (bench/video/run.sh); this one adds what Python costs.

    conveyor_video.py --data DIR [--stride S] [common options]     # --cpu-smoke: on the CPU here

The pipeline file reads its knobs from CONVEYOR_BENCH_* (set here from the options). The video
plugin is found beside libconveyor_c.so or in CONVEYOR_PLUGIN_PATH (run.sh sets it).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import video_common as vc  # noqa: E402
from video_common import common  # noqa: E402

YAML = os.path.join(os.path.dirname(vc.HERE), "pipelines", "video_bench.yaml")


def set_env(args, device):
    for key, value in (("DEVICE", device), ("CAPTURE", "true"), ("BATCH", args.batch), ("THREADS", args.threads),
                       ("PREFETCH", args.prefetch), ("STRIDE", args.stride), ("DATA", os.path.abspath(args.data))):
        os.environ["CONVEYOR_BENCH_" + key] = str(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    vc.add_args(ap)
    ap.add_argument("--yaml", default=YAML)
    args = ap.parse_args()
    vc.apply_smoke(args)
    device = "cpu" if args.cpu_smoke else "gpu"
    label = args.label or "conveyor python"
    files = vc.video_files(args.data)
    set_env(args, device)
    try:
        import conveyor
    except ImportError as e:
        return common.skip("conveyor-python", "cannot import conveyor: %s" % e, label)
    pipe = conveyor.Pipeline(args.yaml)
    it = iter(pipe)
    stream = conveyor.Stream() if device == "gpu" else None
    state = {"batch": None}

    def step():
        state["batch"] = None  # let go of the slot first
        state["batch"] = next(it)

    def sync():
        if stream is not None:  # an export to our stream waits on the batch's ready event there
            capsule = state["batch"]["frames"].__dlpack__(stream=stream.handle)
            del capsule
            stream.synchronize()

    clips = pipe.epoch_size("reader")
    figures = vc.timed(step, sync, args.batch, -(-clips // args.batch), args)
    frames = state["batch"]["frames"]
    shape = list(frames.shape) if not isinstance(frames, list) else [len(frames)] + list(frames[0].shape)
    common.emit(dict(figures, contender="conveyor-python", label=label, codec=args.codec, stride=args.stride,
                     device=device, files=len(files), clips_per_epoch=clips, threads=args.threads,
                     prefetch=args.prefetch, output_shape=shape, via="conveyor.Pipeline",
                     versions=dict(common.versions(), conveyor=conveyor.__version__, library=conveyor.library_path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
