#!/usr/bin/env bash
# Runs on the GPU machine (one call): bundle B's GPU tests matching TESTS, then BENCH's benchmarks
# matching FILTER from bundles A and B alternately (A B A B), in the same call on the same GPU, so
# a change is measured against its baseline (tools/ab_bundles.sh makes the two bundles).
#   bash tools/device_ab.sh TESTS BENCH FILTER
#   bash tools/device_ab.sh 'resize|random_resized_crop|geometry_pipeline' geometry_bench BM_Resample
# Summary in $OUT/summary.txt, test logs under $OUT/tests.
set -uo pipefail
TESTS=${1:?usage: device_ab.sh TESTS BENCH FILTER}
BENCH=${2:?usage: device_ab.sh TESTS BENCH FILTER}
FILTER=${3:?usage: device_ab.sh TESTS BENCH FILTER}
OUT=${OUT:-$PWD/.device_out}
R=$PWD
mkdir -p "$OUT" A B
tar xJf .gpu_bundle/a.tar.xz -C A && tar xJf .gpu_bundle/b.tar.xz -C B || { echo "device_ab: .gpu_bundle/a.tar.xz and b.tar.xz expected"; exit 1; }
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
echo "A $(cat A/.bundle/commit)  B $(cat B/.bundle/commit)" | tee -a "$S"
echo "== B: GPU tests matching $TESTS" | tee -a "$S"
(export LD_LIBRARY_PATH=$R/B/.bundle/lib; OUT=$OUT/tests timeout 240 B/.bundle/run.sh --gpu-only --only "$TESTS" 2>&1 |
  tail -15 | tee -a "$S")
echo "== $BENCH $FILTER: A B A B" | tee -a "$S"
for b in A B A B; do
  (export LD_LIBRARY_PATH=$R/$b/.bundle/lib; timeout 90 "$b/.bundle/bench/$BENCH" --benchmark_filter="$FILTER" \
     --benchmark_min_time=1 2>&1 | grep -E '^BM_|^[A-Z][A-Za-z]+/' | sed "s/^/$b /" | tee -a "$S")
done
rm -rf "$OUT/tests/xml"
