#!/usr/bin/env bash
# Issue 13, section 3: how cost grows. One knob at a time, the rest as in run_all.sh (fused
# pipeline, capture on, batch 256, 8 threads, prefetch 2, 500x375): Conveyor through
# `conveyor bench` (its stage times say where the time goes) beside DALI's fused pipeline.
# Results join run_all.sh's in $WORK/raw; RESULTS.md is rewritten with both. Run it after
# run_all.sh in the same warm machine, or merge the two raw.tar.gz later and run make_results.py.
#
#   bash .bundle/suite/run_sweeps.sh [--only batch,threads,size,prefetch] [--budget S] [--cpu-smoke]
#
# | axis     | values                                   | data                               |
# |----------|------------------------------------------|------------------------------------|
# | batch    | 32 64 128 256 512                        | the uniform set (run_all.sh's second|
# |          |                                          | column): 2,048 500x375 q90 files   |
# | threads  | 1 2 4 8 12 16 (num_threads, both)        | same                               |
# | size     | 250x190 500x375 750x563 1000x750         | 512 files of each size (generated) |
# | prefetch | 1 2 3 4 (prefetch_depth / prefetch_queue_depth) | same as batch               |
# All four take about 6 minutes on the H100 machine; --budget (default 450 s) skips what is left
# (listed in RESULTS.md), so split with --only when a call must stay short.
set -uo pipefail
SUITE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AXES="batch,threads,size,prefetch"; BUDGET_S=450; SMOKE=0; BUNDLE_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) AXES=$2; shift ;;
    --budget) BUDGET_S=$2; shift ;;
    --bundle) BUNDLE_ARG=$2; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "run_sweeps.sh: unknown argument \"$1\" (expected --only LIST, --budget S, --bundle DIR, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
mkdir -p "$RAW" "$OUTDIR"
rm -f "$RAW"/sweep_*
log_to "$OUTDIR/run_sweeps.log"
want() { [[ ",$AXES," == *",$1,"* ]]; }

BATCH=256; THREADS=8; PREFETCH=2; DEVICE=gpu; N_MAIN=2048; N_SIZE=512; IMAGES_PER_BLOCK=7680; REP=3; SMOKE_ARG=()
BATCHES="32 64 128 256 512"; THREAD_LIST="1 2 4 8 12 16"; SIZES="250x190 500x375 750x563 1000x750"; DEPTHS="1 2 3 4"
if [ "$SMOKE" = 1 ]; then
  BATCH=8; THREADS=2; DEVICE=cpu; N_MAIN=64; N_SIZE=16; IMAGES_PER_BLOCK=16; REP=2; SMOKE_ARG=(--cpu-smoke)
  BATCHES="4 8"; THREAD_LIST="1 2"; SIZES="250x190 500x375"; DEPTHS="1 2"
fi
[ -f "$RAW/machine.txt" ] || machine_facts
MAIN=$WORK/data/uniform
dataset "$MAIN" uniform "$N_MAIN" || exit 1
CENV=$(conveyor_env); DENV=$(dali_env)

# point AXIS VALUE DATA FILES BATCH THREADS PREFETCH: Conveyor and DALI at one setting.
point() {
  local axis=$1 value=$2 data=$3 files=$4 batch=$5 threads=$6 prefetch=$7
  local epoch=$(( (files + batch - 1) / batch )) it=$(( IMAGES_PER_BLOCK / batch ))
  [ "$it" -ge 3 ] || it=3
  measure "sweep_${axis}_conveyor_$value" 150 \
    "$CENV CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=$batch CONVEYOR_BENCH_THREADS=$threads CONVEYOR_BENCH_PREFETCH=$prefetch CONVEYOR_BENCH_DATA=$data" \
    "axis=$axis value=$value who=conveyor" -- "$CONVEYOR_BIN" bench "$PIPES/train_fused.yaml" --json \
    --warmup $((epoch + 3)) --iterations "$it" --repeats "$REP"
  measure "sweep_${axis}_dali_$value" 150 "$DENV" "axis=$axis value=$value who=dali" -- "$DALI_PYTHON" \
    "$E2E/dali_e2e.py" --mode fused --data "$data" --batch "$batch" --threads "$threads" --prefetch "$prefetch" \
    --iterations "$it" --repeats "$REP" "${SMOKE_ARG[@]}"
}

if want batch && ! over_budget "sweep batch"; then
  echo "== images/s against batch size"
  for b in $BATCHES; do over_budget "sweep batch $b" && break; point batch "$b" "$MAIN" "$N_MAIN" "$b" "$THREADS" "$PREFETCH"; done
fi
if want threads && ! over_budget "sweep threads"; then
  echo "== images/s against CPU threads"
  for t in $THREAD_LIST; do over_budget "sweep threads $t" && break; point threads "$t" "$MAIN" "$N_MAIN" "$BATCH" "$t" "$PREFETCH"; done
fi
if want size && ! over_budget "sweep size"; then
  echo "== images/s against image size"
  for s in $SIZES; do
    over_budget "sweep size $s" && break
    if [ "$s" = 500x375 ]; then dir=$MAIN; n=$N_MAIN; else
      dir=$WORK/data/$s; n=$N_SIZE
      images "$dir" "$n" "${s%x*}" "${s#*x}" || continue
    fi
    warm_cache "$dir"
    point size "$s" "$dir" "$n" "$BATCH" "$THREADS" "$PREFETCH"
  done
fi
if want prefetch && ! over_budget "sweep prefetch"; then
  echo "== images/s against prefetch depth"
  for d in $DEPTHS; do over_budget "sweep prefetch $d" && break; point prefetch "$d" "$MAIN" "$N_MAIN" "$BATCH" "$THREADS" "$d"; done
fi

echo "== results ($SECONDS s so far)"
pack
echo "run_sweeps: done in $SECONDS s"
end_log
