#!/usr/bin/env bash
# Runs on the GPU machine (one call): the GPU tests matching TESTS of every variant but A, then
# BENCH's benchmarks matching FILTER from every variant in turn, twice (A B A B, or A B C A B C), in
# the same call on the same GPU, so each change is measured against its baseline A
# (tools/ab_bundles.sh makes the bundles: A = main, B, C, ... = the branches).
#   bash tools/device_ab.sh TESTS BENCH FILTER
#   bash tools/device_ab.sh 'resize|random_resized_crop|geometry_pipeline' geometry_bench BM_Resample
#   SANITIZE=initcheck bash tools/device_ab.sh ...   also runs those tests under compute-sanitizer
# Summary in $OUT/summary.txt, test logs under $OUT/tests/<variant> (and $OUT/san/<variant>).
set -uo pipefail
TESTS=${1:?usage: device_ab.sh TESTS BENCH FILTER}
BENCH=${2:?usage: device_ab.sh TESTS BENCH FILTER}
FILTER=${3:?usage: device_ab.sh TESTS BENCH FILTER}
OUT=${OUT:-$PWD/.device_out}
R=$PWD
mkdir -p "$OUT"
source "$(dirname "$0")/ab_lib.sh"
ab_unpack || exit 1
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
for v in "${VARIANTS[@]}"; do echo "$v $(cat "$v/.bundle/commit")"; done | paste -sd' ' | tee -a "$S"
for v in "${VARIANTS[@]:1}"; do
  echo "== $v: GPU tests matching $TESTS" | tee -a "$S"
  (export LD_LIBRARY_PATH=$R/$v/.bundle/lib; OUT=$OUT/tests/$v timeout 240 "$v/.bundle/run.sh" --gpu-only --only "$TESTS" 2>&1 |
    tail -15 | tee -a "$S")
  if [ -n "${SANITIZE:-}" ]; then  # e.g. SANITIZE=initcheck: the same tests under compute-sanitizer
    echo "== $v: $SANITIZE on the GPU tests matching $TESTS" | tee -a "$S"
    (export LD_LIBRARY_PATH=$R/$v/.bundle/lib; OUT=$OUT/san/$v timeout 300 "$v/.bundle/run.sh" --sanitize-only \
       --tools "$SANITIZE" --jobs 8 --sanitize-timeout 240 --only "$TESTS" 2>&1 | tail -8 | tee -a "$S")
  fi
  rm -rf "$OUT/tests/$v/xml"
done
echo "== $BENCH $FILTER: ${VARIANTS[*]}, twice" | tee -a "$S"
for round in 1 2; do
  for v in "${VARIANTS[@]}"; do
    (export LD_LIBRARY_PATH=$R/$v/.bundle/lib; timeout 90 "$v/.bundle/bench/$BENCH" --benchmark_filter="$FILTER" \
       --benchmark_min_time=1 2>&1 | grep -E '^BM_|^[A-Z][A-Za-z]+/' | sed "s/^/$v /" | tee -a "$S")
  done
done
