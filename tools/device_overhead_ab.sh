#!/usr/bin/env bash
# One device call (~1 minute): the overhead pipeline (bench/pipelines/overhead_10op.yaml, 10 casts at
# batch 1) through `conveyor bench`, bundle A (main) against bundle B (tools/ab_bundles.sh
# wip/lift-descriptor-uploads: descriptor copies lifted to graph roots, and CONVEYOR_DESCRIPTORS_MAPPED=1
# reading descriptors from pinned mapped memory with no copy at all), captured and eager, then
# B's cast and conformance GPU tests with the mapped descriptors. Run from the repository root on
# the GPU machine with .gpu_bundle (a.tar.xz, b.tar.xz) carried.
set -uo pipefail
OUT=${OUT:-$PWD/.device_out}; mkdir -p "$OUT"
R=$PWD; mkdir -p A B; tar xJf .gpu_bundle/a.tar.xz -C A; tar xJf .gpu_bundle/b.tar.xz -C B
echo "A $(cat A/.bundle/commit) B $(cat B/.bundle/commit)"
run() { local b=$1 cap=$2 m=$3; (export LD_LIBRARY_PATH=$R/$b/.bundle/lib; CONVEYOR_DESCRIPTORS_MAPPED=$m CONVEYOR_BENCH_CAPTURE=$cap timeout 30 $b/.bundle/conveyor bench $R/$b/.bundle/suite/pipelines/overhead_10op.yaml --json --warmup 500 --iterations 2000 --repeats 5 | tr -d '\n' | python3 -c "import json,sys; d=json.load(sys.stdin); print('$b capture=$cap mapped=$m us/it', round(1e6/d['samples_per_s']['median'],2), d['ms_per_iteration'])"); }
for r in 1 2; do run A true 0; run B true 0; run B true 1; done; run A false 0; run B false 1
(export LD_LIBRARY_PATH=$R/B/.bundle/lib; CONVEYOR_DESCRIPTORS_MAPPED=1 OUT=$OUT/t timeout 60 B/.bundle/run.sh --gpu-only --only 'cast__cast_test|operators_conformance' 2>&1 | tail -3); rm -rf $OUT/t
