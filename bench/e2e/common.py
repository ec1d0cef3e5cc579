"""Shared by the end-to-end contenders (bench/e2e/*.py): the timing loop, CPU accounting, the file
list and the output every contender prints.

Timing rule, the same for every contender:
  1. one untimed pass over the whole data set (an epoch: pages into the page cache, decoder state,
     CUDA graph captures, pools, lazy initialisation), then `warmup` more untimed iterations;
  2. `repeats` timed blocks of `iterations` iterations each; a block ends when its last batch is
     complete on the GPU (the contender's `sync`), so queued work is never counted as done;
  3. the figure is the median of the blocks' images/s; min and max are printed beside it.
CPU busy is (user + system CPU time of this process and all its children) / wall time over the
timed blocks, from psutil when present (DataLoader workers are children), else os.times().

Each contender prints one JSON object on its last stdout line (`emit`); bench/e2e/measure.py adds the
GPU and host memory peaks it sampled from outside the process.
"""
import json
import os
import statistics
import sys
import time

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
CROP = 224


def add_common_args(ap, iterations=30, repeats=5, warmup=3):
    ap.add_argument("--data", default=os.environ.get("CONVEYOR_BENCH_DATA", ""),
                    help="folder of JPEGs (class subfolders); default $CONVEYOR_BENCH_DATA")
    ap.add_argument("--batch", type=int, default=int(os.environ.get("CONVEYOR_BENCH_BATCH", 256)))
    ap.add_argument("--threads", type=int, default=int(os.environ.get("CONVEYOR_BENCH_THREADS", 8)))
    ap.add_argument("--prefetch", type=int, default=int(os.environ.get("CONVEYOR_BENCH_PREFETCH", 2)))
    ap.add_argument("--iterations", type=int, default=iterations, help="iterations per timed block")
    ap.add_argument("--repeats", type=int, default=repeats, help="timed blocks")
    ap.add_argument("--warmup", type=int, default=warmup, help="untimed iterations after the first epoch")
    ap.add_argument("--no-epoch", action="store_true", help="skip the untimed first epoch (smoke runs)")
    ap.add_argument("--cpu-smoke", action="store_true",
                    help="tiny run on the CPU (no GPU needed): checks the script, its numbers mean nothing")
    ap.add_argument("--label", default="", help="name of this row in the results")


def apply_smoke(args, **small):
    """--cpu-smoke: take the small values for the options not given on the command line, so a
    smoke run of a sweep keeps the values it sweeps."""
    if not args.cpu_smoke:
        return
    given = {a.split("=")[0] for a in sys.argv[1:] if a.startswith("--")}
    for key, value in small.items():
        if "--" + key.replace("_", "-") not in given:
            setattr(args, key, value)


def jpeg_files(folder):
    """Sorted JPEG paths under folder (recursively); exits with a clear message when there are none."""
    if not folder or not os.path.isdir(folder):
        sys.exit("expected --data (or $CONVEYOR_BENCH_DATA) to name a folder of JPEGs, got %r" % folder)
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(folder) for f in names
                   if f.lower().endswith((".jpg", ".jpeg")))
    if not files:
        sys.exit("expected JPEG files under %s, found none" % folder)
    return files


def is_jpeg(path):
    """Whether the file's bytes are a JPEG (SOI marker), whatever its name: the realistic set holds a
    PNG named .jpg, as ImageNet does."""
    with open(path, "rb") as f:
        return f.read(2) == b"\xff\xd8"


CUDA_SCHEDULES = {"auto": 0, "spin": 1, "yield": 2, "blocking": 4}  # CU_CTX_SCHED_*


def apply_cuda_schedule():
    """CONVEYOR_CUDA_SCHEDULE (measuring switch, as `conveyor bench`'s): how this process's host threads
    wait for the GPU, set on the device's primary context through the driver API before any library
    makes it, so torch, Conveyor and nvJPEG all wait that way. Returns the value applied or None."""
    value = os.environ.get("CONVEYOR_CUDA_SCHEDULE")
    if not value:
        return None
    if value not in CUDA_SCHEDULES:
        sys.exit("CONVEYOR_CUDA_SCHEDULE: expected one of %s, got %r" % (", ".join(CUDA_SCHEDULES), value))
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int()
    for what, rc in (("cuInit", cuda.cuInit(0)), ("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(dev), 0)),
                     ("cuDevicePrimaryCtxSetFlags", cuda.cuDevicePrimaryCtxSetFlags(dev, CUDA_SCHEDULES[value]))):
        if rc != 0:
            sys.exit("CONVEYOR_CUDA_SCHEDULE=%s: %s failed (CUresult %d)" % (value, what, rc))
    return value


class CpuClock:
    """CPU seconds of this process and its live children (psutil), else of this process alone."""

    def __init__(self):
        try:
            import psutil
            self._proc = psutil.Process()
        except ImportError:
            self._proc = None
        self.source = "psutil process tree" if self._proc else "os.times (this process only)"

    def seconds(self):
        if self._proc is None:
            t = os.times()
            return t.user + t.system
        total = 0.0
        procs = [self._proc]
        try:
            procs += self._proc.children(recursive=True)
        except Exception:  # a child that ends while being listed
            pass
        for p in procs:
            try:
                c = p.cpu_times()
                total += c.user + c.system
            except Exception:
                pass
        return total


def run_timed(step, sync, batch, epoch_iterations, args, probe=None):
    """Runs the timing rule above. `step()` produces one batch, `sync()` waits for the last one.
    Returns the dict of figures. `probe()`, if given, is read right before and right after the
    timed repeats: the two readings come back as figures["probe"] = (before, after)."""
    untimed = (0 if args.no_epoch else epoch_iterations) + args.warmup
    # Before the warm-up: its psutil import (tens of ms) between the warm-up and the timed blocks
    # left the pipeline's stage thread waiting for this loop, and that wait, counted when it ends,
    # landed in the probe's timed window (0.45 ms of "idle" per iteration on the H100).
    clock = CpuClock()
    for _ in range(untimed):
        step()
    sync()
    rates, walls = [], []
    before = probe() if probe else None
    cpu0 = clock.seconds()
    for _ in range(args.repeats):
        start = time.perf_counter()
        for _ in range(args.iterations):
            step()
        sync()
        wall = time.perf_counter() - start
        walls.append(wall)
        rates.append(args.iterations * batch / wall)
    cpu = clock.seconds() - cpu0
    after = probe() if probe else None
    return {
        **({"probe": (before, after)} if probe else {}),
        "images_per_s": round(statistics.median(rates), 1),
        "images_per_s_min": round(min(rates), 1),
        "images_per_s_max": round(max(rates), 1),
        "repeats_images_per_s": [round(r, 1) for r in rates],
        "batch": batch,
        "iterations_per_repeat": args.iterations,
        "repeats": args.repeats,
        "untimed_iterations": untimed,
        "cpu_cores_busy": round(cpu / max(sum(walls), 1e-9), 2),
        "cpu_source": clock.source,
    }


def versions(*modules):
    out = {"python": sys.version.split()[0]}
    for name in modules:
        try:
            mod = __import__(name)
            for part in name.split(".")[1:]:
                mod = getattr(mod, part)
            out[name] = getattr(mod, "__version__", "?")
        except Exception as e:  # reported, not fatal: the row says what was missing
            out[name] = "unavailable (%s)" % type(e).__name__
    return out


def emit(result):
    """The contender's result: one JSON object on the last stdout line."""
    sys.stdout.flush()
    print(json.dumps(result, sort_keys=True))
    sys.stdout.flush()


def skip(contender, reason, label=""):
    emit({"contender": contender, "label": label, "skipped": reason})
    return 0
