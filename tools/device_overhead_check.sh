#!/usr/bin/env bash
# One device call (~1 minute) for the Python iteration overhead target (issue 13: <= 20 us captured on
# bench/pipelines/overhead_10op.yaml): the same YAML through `conveyor bench` (C++, capture on/off,
# the stage times per iteration), through conveyor_e2e.py --mode overhead, and a Python loop timed
# around next() with a cProfile of it, so the Python share and the executor share can be told apart.
# Run on the GPU machine from the repository root with .gpu_bundle carried.
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"
export $(conveyor_env)
Y=$B/suite/pipelines/overhead_10op.yaml
for cap in true false; do CONVEYOR_BENCH_CAPTURE=$cap $B/conveyor bench $Y --json --warmup 500 --iterations 2000 --repeats 5 | tr -d '\n'; echo; done
python3 $B/suite/e2e/conveyor_e2e.py --mode overhead --capture on --blocks 5 --block-iterations 2000 2>&1 | tail -3
CONVEYOR_BENCH_CAPTURE=true python3 - $Y <<'PY'
import conveyor, time, cProfile, pstats, sys
pipe = conveyor.Pipeline(sys.argv[1]); it = iter(pipe)
for _ in range(500): b = next(it)
for rep in range(3):
    t = time.perf_counter()
    for _ in range(5000): b = None; b = next(it)
    print("python loop us/it", round((time.perf_counter() - t) / 5000 * 1e6, 2))
# time inside next() alone vs the loop around it
t_c = 0.0; t = time.perf_counter()
nxt = type(pipe).__next__
for _ in range(5000):
    b = None; t0 = time.perf_counter(); b = nxt(pipe); t_c += time.perf_counter() - t0
print("next() us/it", round(t_c / 5000 * 1e6, 2), "whole", round((time.perf_counter() - t) / 5000 * 1e6, 2))
pr = cProfile.Profile(); pr.enable()
for _ in range(5000): b = None; b = next(it)
pr.disable(); pstats.Stats(pr).sort_stats("tottime").print_stats(8)
PY
