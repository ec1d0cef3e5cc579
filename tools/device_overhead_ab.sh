#!/usr/bin/env bash
# One device call: the overhead pipeline (bench/pipelines/overhead_10op.yaml, 10 casts at batch 1)
# through `conveyor bench`, bundle A (main) against bundle B (tools/ab_bundles.sh BRANCH), captured
# (A B A B, and B with each ENV=VALUE given) and eager, then B's GPU tests matching TESTS (default:
# all), and those matching VARIANT_TESTS once more under each ENV=VALUE. Run from the repository
# root on the GPU machine with .gpu_bundle (ab.tar.xz, or a.tar.xz + b.tar.xz) carried.
#   bash tools/device_overhead_ab.sh [--tests REGEX] [--variant-tests REGEX] [ENV=VALUE ...]
#   bash tools/device_overhead_ab.sh --variant-tests 'pipelines|conformance' NAME=VALUE   # a switch branch B reads
set -uo pipefail
TESTS=. VTESTS=
while [ $# -gt 0 ]; do
  case $1 in
    --tests) TESTS=$2; shift 2 ;;
    --variant-tests) VTESTS=$2; shift 2 ;;
    *) break ;;
  esac
done
OUT=${OUT:-$PWD/.device_out}; mkdir -p "$OUT"
R=$PWD
source "$(dirname "$0")/ab_lib.sh"
ab_unpack || exit 1  # A and B (further variants of tools/ab_bundles.sh are not used here)
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
echo "A $(cat A/.bundle/commit) B $(cat B/.bundle/commit)" | tee -a "$S"
bench() {  # bundle capture [ENV=VALUE]
  local b=$1 cap=$2; shift 2
  (export LD_LIBRARY_PATH=$R/$b/.bundle/lib; env "$@" CONVEYOR_BENCH_CAPTURE=$cap timeout 60 $b/.bundle/conveyor bench \
     $R/$b/.bundle/suite/pipelines/overhead_10op.yaml --json --warmup 500 --iterations 2000 --repeats 5 | tr -d '\n' |
   python3 -c "import json,sys; d=json.load(sys.stdin); print('$b capture=$cap $* us/it', round(1e6/d['samples_per_s']['median'],2), {k: v for k, v in d.items() if k.startswith('stage') or k.startswith('ms_per')})" | tee -a "$S")
}
for r in 1 2; do bench A true; bench B true; for v in "$@"; do bench B true "$v"; done; done
bench A false; bench B false
echo "== B: GPU tests matching $TESTS" | tee -a "$S"
(export LD_LIBRARY_PATH=$R/B/.bundle/lib; OUT=$OUT/tests timeout 400 B/.bundle/run.sh --gpu-only --only "$TESTS" 2>&1 | tail -8 | tee -a "$S")
if [ -n "$VTESTS" ]; then
  for v in "$@"; do
    echo "== B with $v: GPU tests matching $VTESTS" | tee -a "$S"
    (export LD_LIBRARY_PATH=$R/B/.bundle/lib; export "$v"; OUT=$OUT/vtests timeout 200 B/.bundle/run.sh --gpu-only --only "$VTESTS" 2>&1 | tail -8 | tee -a "$S")
  done
fi
rm -rf "$OUT/tests/xml" "$OUT/vtests/xml"
