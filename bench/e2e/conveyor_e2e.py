#!/usr/bin/env python3
"""Conveyor through Python (conveyor.Pipeline, or conveyor.torch.Loader with --loader), timed like every other
contender (common.py).

    conveyor_e2e.py --yaml bench/pipelines/train_fused.yaml --data DIR [--capture on|off] [--loader] [common options]
    conveyor_e2e.py --mode overhead [--capture on|off] [--blocks 15 --block-iterations 2000]
    conveyor_e2e.py ... --cpu-smoke          # tiny CPU run here: checks the script

mode train (default): iterates the pipeline (next(pipe): outputs() then run()), holding only the
  current batch, as a training loop does. A block ends with a host wait for its last batch's GPU
  work (an export to our own stream + synchronize), so queued work is never counted.
  --loader: through conveyor.torch.Loader instead (output_map ["images", "labels"], reader_name
  "reader", DALI's default last_batch_policy "fill", auto_reset), as a PyTorch training loop does:
  torch tensors out (zero-copy, torch.from_dlpack), epochs restarting inside the timed blocks; a
  block ends with a synchronize of torch's current stream, which the Loader's tensors wait on.
  Needs torch (bench/run_all.sh's rows take this path).
mode overhead: bench/pipelines/overhead_10op.yaml at batch 1; microseconds per next(pipe), median
  of blocks. Target (issue 13): captured <= 20 us and >= 10x faster than DALI's pipe.run().
The pipeline files read their knobs from CONVEYOR_BENCH_* (set here from the options).
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PIPELINES = os.path.join(os.path.dirname(HERE), "pipelines")


def set_env(args, device):
    os.environ["CONVEYOR_BENCH_DEVICE"] = device
    os.environ["CONVEYOR_BENCH_CAPTURE"] = "true" if args.capture == "on" else "false"
    os.environ["CONVEYOR_BENCH_BATCH"] = str(args.batch)
    os.environ["CONVEYOR_BENCH_THREADS"] = str(args.threads)
    os.environ["CONVEYOR_BENCH_PREFETCH"] = str(args.prefetch)
    if args.data:
        os.environ["CONVEYOR_BENCH_DATA"] = os.path.abspath(args.data)


class Syncer:
    """Host wait for a GPU output's work: export it to our own stream (an event wait there), then
    synchronize that stream. Host outputs are complete when outputs() returns."""

    def __init__(self, conveyor, gpu):
        self.stream = conveyor.Stream() if gpu else None

    def wait(self, tensor):
        if self.stream is None:
            return
        if isinstance(tensor, list):
            tensor = tensor[-1]
        capsule = tensor.__dlpack__(stream=self.stream.handle)
        del capsule  # never consumed: its destructor releases the export
        self.stream.synchronize()


class LoaderSteps:
    """The batches of conveyor.torch.Loader, epoch after epoch (auto_reset: the StopIteration that
    ends an epoch is followed by the next epoch's first batch), and the host wait for the last one."""

    def __init__(self, pipe, gpu):
        import torch
        from conveyor.torch import Loader
        self.torch, self.gpu = torch, gpu
        self.loader = Loader(pipe, ["images", "labels"], reader_name="reader", last_batch_policy="fill")

    def next(self):
        try:
            return next(self.loader)[0]
        except StopIteration:
            return next(self.loader)[0]

    def wait(self, tensor):
        if self.gpu:
            self.torch.cuda.current_stream().synchronize()


def train(args, conveyor, gpu):
    yaml = args.yaml
    files = common.jpeg_files(args.data)
    pipe = conveyor.Pipeline(yaml)
    if args.loader:
        loader = LoaderSteps(pipe, gpu)
        take, syncer = loader.next, loader
    else:
        it = iter(pipe)
        take, syncer = (lambda: next(it)), Syncer(conveyor, gpu)
    state = {"batch": None}
    first = None

    def step():
        state["batch"] = None  # let go of the slot first: prefetch_depth 1 works too
        state["batch"] = take()

    def sync():
        syncer.wait(state["batch"][first])

    step()
    first = next(iter(state["batch"]))
    epoch = -(-len(files) // args.batch)
    # The stage thread's split over the timed repeats only (warm-up excluded), as `conveyor bench`
    # reports it for the C++ rows: ms per iteration in the CPU stage, issuing the GPU stage, waiting
    # for the GPU, idle (waiting for this loop). Bundles older than stage_times() skip it.
    probe = pipe.stage_times if hasattr(pipe, "stage_times") else None
    figures = common.run_timed(step, sync, args.batch, epoch - 1, args, probe=probe)
    if "probe" in figures:
        before, after = figures.pop("probe")
        its = max(after["iterations"] - before["iterations"], 1)
        figures["ms_per_iteration"] = {k: round((after[k] - before[k]) / its * 1e3, 3)
                                       for k in ("cpu_stage", "gpu_issue", "gpu_wait", "idle")}
        figures["stage_iterations"] = its
    shape = state["batch"][first]
    shape = list(shape.shape) if not isinstance(shape, list) else [len(shape)] + list(shape[0].shape)
    return dict(figures, files=len(files), output=first, output_shape=shape,
                output_dtype=str(state["batch"][first].dtype if not isinstance(state["batch"][first], list)
                                 else state["batch"][first][0].dtype))


def overhead(args, conveyor, gpu):
    pipe = conveyor.Pipeline(os.path.join(PIPELINES, "overhead_10op.yaml"))
    it = iter(pipe)
    syncer = Syncer(conveyor, gpu)
    batch = None
    for _ in range(500):  # warm-up: captures, pools
        batch = None
        batch = next(it)
    syncer.wait(batch["x9"])
    blocks = []
    clock = common.CpuClock()
    cpu0, wall = clock.seconds(), 0.0
    for _ in range(args.blocks):
        start = time.perf_counter()
        for _ in range(args.block_iterations):
            batch = None
            batch = next(it)
        syncer.wait(batch["x9"])
        elapsed = time.perf_counter() - start
        wall += elapsed
        blocks.append(elapsed / args.block_iterations * 1e6)
    return {"us_per_iteration": round(statistics.median(blocks), 2),
            "us_per_iteration_min": round(min(blocks), 2), "us_per_iteration_max": round(max(blocks), 2),
            "blocks_us": [round(b, 2) for b in blocks], "block_iterations": args.block_iterations,
            "cpu_cores_busy": round((clock.seconds() - cpu0) / max(wall, 1e-9), 2), "batch": 1, "ops": 10}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("--mode", choices=["train", "overhead"], default="train")
    ap.add_argument("--yaml", default=os.path.join(PIPELINES, "train_fused.yaml"))
    ap.add_argument("--capture", choices=["on", "off"], default="on")
    ap.add_argument("--loader", action="store_true", help="mode train: through conveyor.torch.Loader (torch tensors)")
    ap.add_argument("--blocks", type=int, default=15)
    ap.add_argument("--block-iterations", type=int, default=2000)
    args = ap.parse_args()
    device = "cpu" if args.cpu_smoke else "gpu"
    common.apply_smoke(args, batch=8, threads=2, iterations=2, repeats=2, warmup=1, blocks=2, block_iterations=50)
    set_env(args, device)
    schedule = common.apply_cuda_schedule() if device == "gpu" else None
    label = args.label or "conveyor-python %s capture=%s%s" % (
        args.mode if args.mode == "overhead" else os.path.basename(args.yaml), args.capture,
        " via Loader" if args.loader and args.mode == "train" else "")
    try:
        import conveyor
    except ImportError as e:
        return common.skip("conveyor-python", "cannot import conveyor: %s" % e, label)
    result = overhead(args, conveyor, device == "gpu") if args.mode == "overhead" else train(args, conveyor, device == "gpu")
    via = "conveyor.torch.Loader" if args.loader and args.mode == "train" else "conveyor.Pipeline"
    result.update(contender="conveyor-python", label=label, mode=args.mode, capture=args.capture, device=device,
                  threads=args.threads, prefetch=args.prefetch, via=via, cuda_schedule=schedule or "auto",
                  pipeline=os.path.basename(args.yaml) if args.mode == "train" else "overhead_10op.yaml",
                  versions=dict(common.versions(), conveyor=conveyor.__version__, library=conveyor.library_path))
    common.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
