#!/usr/bin/env bash
# Issue 38's figures: (1) the policy benchmark — Conveyor's auto_augment / rand_augment /
# trivial_augment_wide beside DALI 2.4's auto_aug module, same files, same run — and (2) the
# augmentation kernels (tests/benchmarks/augment_bench beside a D2D copy) with their PyTorch peers
# (bench/augment_peers.py). Writes $OUT/augment/: RESULTS.md, results.json, run.log, raw.tar.gz
# (every row's JSON and log).
#
#   on the GPU machine (DALI staged into /root/dali_site by tools/stage_dali.sh):
#     tar xJf .gpu_bundle/bundle.tar.xz && bash .bundle/suite/augment/run.sh
#   here, to check the script (CPU, batch 8, numbers meaningless):
#     bash bench/augment/run.sh --cpu-smoke
#
# Section 1, policies: the realistic set (bench/lib.sh `dataset realistic 2048`, in its own folder so
# run_all.sh's 4,096-file set stays), batch 256, 8 CPU threads and prefetch 2 on both sides: read →
# GPU decode → random_resized_crop 224 → flip on a coin → policy → normalize to float32 CHW. Rows,
# each a process under e2e/measure.py, the Conveyor row right before its DALI peer:
#   none (the cost of a policy = its row's time per image minus this one's), rand_augment n=2 m=9,
#   trivial_augment_wide, auto_augment image_net (the tables differ: RESULTS.md), auto_augment
#   reduced_image_net (the same table on both sides).
# Conveyor: `conveyor bench` on bench/pipelines/augment_*.yaml (first epoch + 3 untimed); DALI:
# augment/dali_policy.py (the same rule, e2e/common.py). Figures: images/s median of 5 blocks of 15
# batches and the slowest block. A pair is skipped (and listed) when its start + the last pair's
# time would pass --budget.
# Section 2, kernels: augment_bench (26 kernels, --benchmark_min_time 0.1) under `timeout 100`, then
# augment_peers.py under `timeout 110` (it stops starting peers after 90 s).
#
# | option          | meaning                                                      | default           |
# |-----------------|--------------------------------------------------------------|-------------------|
# | --bundle DIR    | the unpacked bundle                                          | found (lib.sh)    |
# | --only LIST     | sections: policy,kernels                                     | policy,kernels    |
# | --budget S      | section 1 starts no pair that would end after S seconds      | 180               |
# | --images N      | files of the realistic set                                   | 2048 (8 batches)  |
# | --cpu-smoke     | section 1 on the CPU at batch 8 with 64 files; section 2     |                   |
# |                 | skips cleanly (no GPU)                                       |                   |
#
# Time on the H100 (estimated, not yet measured): data 2,048 realistic files ~15 s (4,096 took 28 s
# on 2026-11-26), each row ~6-10 s (DALI ~5 s of start-up, Conveyor ~2 s, 22k images at 5-15k
# images/s), 5 pairs ~90-110 s: section 1 ≤ 180 s by --budget (worst ~200 s: the last pair may
# overrun its estimate). Section 2 ≤ 120 s (augment_bench ~15 s, peers ≤ 100 s: torch.compile
# compiles take most of it). Both: ≤ ~320 s.
set -uo pipefail
AUG=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE=$(cd "$AUG/.." && pwd)
BUNDLE_ARG=""; ONLY="policy,kernels"; BUDGET_S=180; N_IMAGES=2048; SMOKE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE_ARG=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --budget) BUDGET_S=$2; shift ;;
    --images) N_IMAGES=$2; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "augment/run.sh: unknown argument \"$1\" (expected --bundle DIR, --only policy,kernels, --budget S," \
            "--images N, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$BUDGET_S" =~ ^[0-9]+$ ]] || { echo "augment/run.sh: --budget expects seconds, got \"$BUDGET_S\"" >&2; exit 2; }
[[ "$N_IMAGES" =~ ^[1-9][0-9]*$ ]] || { echo "augment/run.sh: --images expects a positive integer, got \"$N_IMAGES\"" >&2; exit 2; }
source "$SUITE/lib.sh"
# Our own raw folder and output folder: run_all.sh's stay untouched.
RAW=$WORK/raw_augment
OUTDIR=${OUT:-$WORK/out}/augment
find_bundle "$BUNDLE_ARG" || exit 1
rm -rf "$RAW"
mkdir -p "$RAW" "$OUTDIR"
log_to "$OUTDIR/run.log"
want() { [[ ",$ONLY," == *",$1,"* ]]; }

BATCH=256; THREADS=8; PREFETCH=2; DEVICE=gpu; IT=15; REP=5; SMOKE_ARG=()
if [ "$SMOKE" = 1 ]; then
  BATCH=8; N_IMAGES=64; THREADS=2; DEVICE=cpu; IT=2; REP=2; SMOKE_ARG=(--cpu-smoke)
fi
DATA=$WORK/data/realistic_$N_IMAGES
EPOCH=$(( (N_IMAGES + BATCH - 1) / BATCH ))
echo "augment: bundle $BUNDLE, batch $BATCH, $THREADS threads, prefetch $PREFETCH, $N_IMAGES realistic files," \
     "sections $ONLY, budget $BUDGET_S s (section 1)"
machine_facts
echo "policy_batch: $BATCH" >> "$RAW/machine.txt"

# ---- section 1: policies ---------------------------------------------------------------------------
# conveyor_row POLICY, dali_row POLICY: one contender; raw file policy_<POLICY>_<who>.json.
CENV=$(conveyor_env); DENV=$(dali_env)
conveyor_row() {
  measure "policy_$1_conveyor" 90 "$CENV CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=true \
CONVEYOR_BENCH_BATCH=$BATCH CONVEYOR_BENCH_THREADS=$THREADS CONVEYOR_BENCH_PREFETCH=$PREFETCH CONVEYOR_BENCH_DATA=$DATA" \
    "policy=$1 who=conveyor" -- "$CONVEYOR_BIN" bench "$SUITE/pipelines/augment_$1.yaml" --json \
    --warmup $((EPOCH + 3)) --iterations "$IT" --repeats "$REP"
}
dali_row() {
  measure "policy_$1_dali" 90 "$DENV" "policy=$1 who=dali" -- "$DALI_PYTHON" "$AUG/dali_policy.py" --policy "$1" \
    --data "$DATA" --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" --repeats "$REP" \
    "${SMOKE_ARG[@]}"
}
if want policy; then
  echo "== 1. policies: Conveyor vs DALI auto_aug, batch $BATCH, realistic set"
  START=$SECONDS
  if dataset "$DATA" realistic "$N_IMAGES"; then
    warm_cache "$DATA"
    phase "augment/data"
    last=25  # seconds a pair takes, until one has been measured
    for p in none rand_augment trivial_augment_wide auto_augment auto_augment_reduced; do
      t=$((SECONDS - START))
      if [ "$p" != none ] && [ $((t + last)) -gt "$BUDGET_S" ]; then
        echo "pair $p: skipped, $t s spent + ~$last s for the pair > the $BUDGET_S s budget" | tee -a "$RAW/skipped.txt"
        continue
      fi
      t0=$SECONDS
      conveyor_row "$p"
      dali_row "$p"
      last=$((SECONDS - t0))
      phase "augment/pair $p"
    done
  else
    echo "augment: no data set, section 1 skipped" | tee -a "$RAW/skipped.txt"
  fi
fi

# ---- section 2: kernels ----------------------------------------------------------------------------
if want kernels; then
  echo "== 2. kernels: augment_bench (vs a D2D copy) and augment_peers.py (torchvision v2, eager, torch.compile)"
  bin=$BENCHBIN/augment_bench
  if [ -x "$bin" ]; then
    t0=$SECONDS
    env ${LIBDIR:+LD_LIBRARY_PATH=$LIBDIR} timeout 100 "$bin" --benchmark_min_time=0.1 \
      --benchmark_out="$RAW/gb_augment_bench.json" --benchmark_out_format=json > "$RAW/gb_augment_bench.log" 2>&1
    rc=$?
    echo "augment_bench: rc $rc in $((SECONDS - t0)) s$([ "$rc" = 124 ] && echo ' (timed out after 100 s)')"
  else
    echo "augment_bench: skipped ($bin not built: bazel build //tests/benchmarks:augment_bench)" | tee -a "$RAW/skipped.txt"
  fi
  phase "augment/augment_bench"
  t0=$SECONDS
  # No PYTHONPATH of ours or DALI's: torch and torchvision of the interpreter.
  timeout 110 "$PYTHON" "$SUITE/augment_peers.py" --deadline 90 > "$RAW/peers_augment.jsonl" 2> "$RAW/peers_augment.log"
  rc=$?
  echo "augment_peers: rc $rc in $((SECONDS - t0)) s, $(grep -c '^{' "$RAW/peers_augment.jsonl") lines$([ "$rc" = 124 ] && echo ' (timed out after 110 s)')"
  [ "$rc" = 0 ] || tail -5 "$RAW/peers_augment.log"
  phase "augment/augment_peers"
fi

echo "== results ($SECONDS s so far)"
echo "augment/total (--only $ONLY): $SECONDS s" >> "$RAW/timings.txt"
"$PYTHON" "$AUG/results.py" --raw "$RAW" --out "$OUTDIR" || echo "augment: results.py failed" >&2
tar czf "$OUTDIR/raw.tar.gz" -C "$WORK" "$(basename "$RAW")"
echo "augment: $(ls "$OUTDIR" | paste -sd' ' -) in $OUTDIR; done in $SECONDS s"
end_log
