"""CUDA-event timing shared by the PyTorch peer scripts (geometry_peers.py, pointwise_peers.py, transpose_csc_peers.py)."""
import statistics

import torch


def time_ms(fn, reps):
    """(one_launch_ms(fn, reps), b2b_ms(fn))."""
    return one_launch_ms(fn, reps), b2b_ms(fn)


def one_launch_ms(fn, reps):
    """Median ms of one call between two events over `reps` calls; one untimed call first."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def b2b_ms(fn, k=10, timings=5):
    """Per call, k calls enqueued back to back between two events (median of `timings`): the GPU's
    time without the host's launch latency that one call between two events also counts — as the
    C++ benchmarks' b2b_ms (tests/benchmarks/back_to_back.h)."""
    times = []
    for _ in range(timings):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(k):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / k)
    return statistics.median(times)
