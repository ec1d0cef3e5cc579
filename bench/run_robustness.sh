#!/usr/bin/env bash
# Issue 34, the robustness sweep: one property of the data at a time. The base is `varied` (varied
# sizes, q90, baseline 4:2:0 only); each variant changes one thing (bench/README.md, make_test_images
# --dataset): varied_progressive, varied_422, varied_444, varied_gray (5% of the files of that
# kind), varied_quality (quality 70-98), varied_large (5% of the files >= 3000 px). 2,048 files
# each. Per set, back to back: Conveyor's fused pipeline through `conveyor bench` (C++,
# pipelines/train_fused.yaml: per-block images/s, the stage split and the decoder's split: engines,
# CUDA backend, CPU path), then DALI's fused pipeline (e2e/dali_e2e.py --mode fused), one process
# each, the same settings as run_all.sh (batch 256, 8 threads, prefetch 2, capture on; first epoch
# untimed, 3 warm-up batches, 5 timed blocks of 30 batches). RESULTS.md: each variant's median
# images/s, its slowest block and its ratio to the base (target: >= 0.85x the base). Raw results
# join run_all.sh's in $WORK/raw (robust_<set>_conveyor.json, robust_<set>_dali.json).
#
#   on the GPU machine (README, call 7), with the rest of run_all.sh after it in the same call:
#     export BENCH_START=$(date +%s); bash .bundle/suite/run_robustness.sh
#     bash .bundle/suite/run_all.sh --only overhead,executor,kernels --keep-raw --budget 450
#   here: bash bench/run_robustness.sh --cpu-smoke     (CPU, 64 files a set, numbers meaningless)
#
# | option        | meaning                                                        | default         |
# |---------------|----------------------------------------------------------------|-----------------|
# | --only LIST   | sets, comma-separated (the base is always measured first)     | all seven       |
# | --images N    | files per set                                                  | 2048            |
# | --threads N   | CPU threads of Conveyor and DALI, matched                      | 8               |
# | --budget S    | sets after S seconds are skipped (and listed); counted from    | 300             |
# |               | $BENCH_START when it is set                                    |                 |
# | --bundle DIR  | the unpacked bundle                                            | found (lib.sh)  |
# | --cpu-smoke   | on the CPU at batch 8 with 64 files a set                      |                 |
#
# Time on the H100, to be confirmed by RESULTS.md's "Where the time went" (from $RAW/timings.txt:
# one line per set, data and both rows). Measured 2026-11-26 (Conveyor built from that day's working
# tree, DALI not staged so its rows were skipped): 142 s in all; data 8-9 s a set, 36 s for
# varied_large (86 s for the seven; kept on a warm machine); `conveyor bench` 6.1-6.4 s a set at
# 16-17.6k images/s, 8.6 s on varied_progressive (7.9k), 10.9 s on varied_large (5.8k). DALI's rows
# are estimated from the 2026-11-26 run_all.sh rows: 4.8 s start-up + 43k images at 6-15k images/s,
# ~8-13 s a set, ~65 s for the seven.
# | part                                                   | s                 |
# |--------------------------------------------------------|-------------------|
# | data, seven sets of 2,048 files (first call only)      | 86 measured       |
# | `conveyor bench`, seven sets                           | 51 measured       |
# | DALI, seven sets                                       | ~65               |
# | results                                                | ~5                |
# Total ~210 s (~125 s with the data kept); call 7 adds run_all.sh's overhead, executor and kernels
# (~205 s in the 2026-11-26 run): ~415 s of the call's 600. --budget 300 skips the sets not started by
# then (counted from BENCH_START when it is set).
set -uo pipefail
SUITE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE=varied
VARIANTS="varied_progressive varied_422 varied_444 varied_gray varied_quality varied_large"
ONLY=""; N=2048; THREADS=8; BUDGET_S=300; SMOKE=0; BUNDLE_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) ONLY=$2; shift ;;
    --images) N=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --budget) BUDGET_S=$2; shift ;;
    --bundle) BUNDLE_ARG=$2; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "run_robustness.sh: unknown argument \"$1\" (expected --only LIST, --images N, --threads N, --budget S," \
            "--bundle DIR, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
SETS="$BASE"
for v in $VARIANTS; do
  if [ -z "$ONLY" ] || [[ ",$ONLY," == *",$v,"* ]]; then SETS="$SETS $v"; fi
done
if [ -n "$ONLY" ]; then
  for v in ${ONLY//,/ }; do
    [[ " $BASE $VARIANTS " == *" $v "* ]] || { echo "run_robustness.sh: --only: unknown set \"$v\" (expected some of: $BASE $VARIANTS)" >&2; exit 2; }
  done
fi
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
mkdir -p "$RAW" "$OUTDIR"
rm -f "$RAW"/robust_*
log_to "$OUTDIR/run_robustness.log"

BATCH=256; PREFETCH=2; DEVICE=gpu; IT=30; REP=5; SMOKE_ARG=()
if [ "$SMOKE" = 1 ]; then
  BATCH=8; N=64; THREADS=2; DEVICE=cpu; IT=2; REP=2; SMOKE_ARG=(--cpu-smoke)
fi
echo "run_robustness: bundle $BUNDLE, sets $SETS, $N files each, batch $BATCH, $THREADS threads, budget $BUDGET_S s"
[ -f "$RAW/machine.txt" ] || machine_facts
CENV=$(conveyor_env); DENV=$(dali_env)
EPOCH=$(( (N + BATCH - 1) / BATCH ))

for set in $SETS; do
  over_budget "robustness sweep: $set" && continue  # each skipped set is listed
  data=$WORK/data/$set
  dataset "$data" "$set" "$N" || { echo "robustness sweep: $set: no data, skipped" | tee -a "$RAW/skipped.txt"; continue; }
  warm_cache "$data"
  measure "robust_${set}_conveyor" 180 \
    "$CENV CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=$BATCH CONVEYOR_BENCH_THREADS=$THREADS CONVEYOR_BENCH_PREFETCH=$PREFETCH CONVEYOR_BENCH_DATA=$data" \
    "sweep=robustness set=$set who=conveyor path=cli" -- "$CONVEYOR_BIN" bench "$PIPES/train_fused.yaml" --json \
    --warmup $((EPOCH + 3)) --iterations "$IT" --repeats "$REP"
  measure "robust_${set}_dali" 180 "$DENV" "sweep=robustness set=$set who=dali" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" \
    --mode fused --data "$data" --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" \
    --repeats "$REP" "${SMOKE_ARG[@]}"
  phase "run_robustness/$set (data and both rows)"
done

echo "== results ($SECONDS s so far)"
echo "run_robustness/total: $SECONDS s" >> "$RAW/timings.txt"
pack
echo "run_robustness: done in $SECONDS s"
end_log
