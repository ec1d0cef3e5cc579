#!/usr/bin/env bash
# Issues 13 and 34: Conveyor against DALI 2.4, torchvision on the GPU and the PyTorch DataLoader on
# the same files, then decode alone, executor overhead (C++ and Python beside DALI's pipe.run()),
# staging, kernels. Writes RESULTS.md, results.json, raw.tar.gz (every JSON and log) and
# run_all.log into $OUT.
#
# Two data sets (bench/lib.sh `dataset`, bench/README.md): `realistic`, the ImageNet-like mix, 4,096
# files, is the headline and gets every contender; `uniform`, 2,048 500x375 q90 4:2:0 photos (the
# set of the issue 13 runs), is the second column and never the headline: it gets only the compared
# fused pair (Conveyor's Python loop through conveyor.torch.Loader, DALI fused) in --processes
# processes, Conveyor's C++ fused row once (run_sweeps.sh's repeats compare with it), and decode
# alone (the pipeline pair and decode_gpu_bench, whose targets are for these files). The realistic
# unfused pair's processes 2-N and decode_gpu_bench on realistic run last, as the budget allows.
#
#   on the GPU machine, DALI staged first (tools/stage_dali.sh), the bundle carried (README: calls 6, 7):
#     tar xJf .gpu_bundle/bundle.tar.xz && bash .bundle/suite/run_all.sh --only e2e,decode
#     export BENCH_START=$(date +%s); bash .bundle/suite/run_robustness.sh
#       bash .bundle/suite/run_all.sh --only overhead,executor,kernels --keep-raw --budget 450
#   here, to check the scripts (CPU, tiny, numbers meaningless):
#     bash bench/run_all.sh --cpu-smoke
#
# | option          | meaning                                                      | default           |
# |-----------------|--------------------------------------------------------------|-------------------|
# | --bundle DIR    | the unpacked bundle                                          | found (lib.sh)    |
# | --sets LIST     | data sets, comma-separated; realistic gets every contender,  | realistic,uniform |
# |                 | any other set the short list above                           |                   |
# | --images N      | files of the realistic set                                   | 4096 (16 batches) |
# | --images-other N| files of each other set                                      | 2048 (8 batches)  |
# | --threads N     | CPU threads of Conveyor and DALI (num_threads), matched      | 8                 |
# | --only LIST     | sections, comma-separated: e2e,decode,overhead,executor,kernels | all            |
# | --processes N   | processes per compared pair row (Conveyor Python / DALI): a  | 3                 |
# |                 | decoder's speed differs per process, up to 2x                |                   |
# | --budget S      | optional parts after S seconds are skipped (and listed);     | 470               |
# |                 | counted from $BENCH_START when it is set                     |                   |
# | --keep-raw      | keep $WORK/raw (another call's results) instead of starting  | off               |
# |                 | empty: RESULTS.md then covers both calls                     |                   |
# | --cpu-smoke     | everything on the CPU at batch 8 with 64 files a set         |                   |
#
# Time on the H100 with --processes 3, to be confirmed by RESULTS.md's "Where the time went" (from
# $RAW/timings.txt). Measured 2026-11-26 (this script with --processes 2, Conveyor built from that
# day's working tree, DALI not staged so its rows were skipped in ~0.1 s): data 28 s (realistic) +
# 5 s (uniform); realistic rows at 3.3-3.8k images/s: Conveyor's Python (Loader) rows 19-22 s each,
# C++ rows 16 s, torchvision 21 s, DataLoader 27 s, C++ decode alone 17 s, torchvision decode 15 s;
# uniform rows: Python (Loader) 9-10 s (35k images/s; ~8 s of start-up: Python, torch, the Loader),
# C++ 4.3 s; process 1 of section 1 213 s. DALI's rows are estimated: 4.8 s start-up (the 2026-11-26
# run) + the row's 43k images at ~11k images/s on realistic (2.2x the uniform set's pixels per file):
# ~11 s there, ~7 s on uniform.
# | part                                                                       | s                    |
# |----------------------------------------------------------------------------|----------------------|
# | data: realistic 4,096 + uniform 2,048 files (first call on a machine only) | 33 measured          |
# | e2e process 1: realistic 12 rows, uniform fused pair + C++ fused           | 213 + DALI ~30       |
# | e2e fused pairs, processes 2-3: realistic and uniform                      | 2 x (30 + DALI 18)   |
# | decode pipelines: realistic 5 rows, uniform pair                           | 32 + DALI ~45        |
# | decode_gpu_bench, uniform                                                  | ~40                  |
# | (budget) the realistic unfused pair, processes 2-3                         | 2 x (22 + DALI 11)   |
# | (budget) decode_gpu_bench, realistic                                       | ~50                  |
# | results                                                                    | ~5                   |
# `--only e2e,decode` (call 6): ~500 s at that day's Conveyor speed; --budget 470 skips each optional
# part (processes 2-3, each decode row, each decode_gpu_bench) not started by 470 s, here the two
# last ones, which run once Conveyor is faster on the realistic set; the worst end is ~525 s (a ~50 s
# part started at 470 s, and the results). Overhead, executor and kernels (~205 s in the 2026-11-26
# run) go with run_robustness.sh into call 7.
# Section 1 (e2e) always runs first; every contender reads the same files, batch 256, and gives
# 224x224 float16 CHW normalized with random flips and RandomResizedCrop-style windows.
set -uo pipefail
SUITE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUNDLE_ARG=""; SETS="realistic,uniform"; N_REALISTIC=4096; N_OTHER=2048; THREADS=8
ONLY="e2e,decode,overhead,executor,kernels"; BUDGET_S=470; SMOKE=0; PROCESSES=3; KEEP_RAW=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE_ARG=$2; shift ;;
    --sets) SETS=$2; shift ;;
    --images) N_REALISTIC=$2; shift ;;
    --images-other) N_OTHER=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --budget) BUDGET_S=$2; shift ;;
    --processes) PROCESSES=$2; shift ;;
    --keep-raw) KEEP_RAW=1 ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "run_all.sh: unknown argument \"$1\" (expected --bundle DIR, --sets LIST, --images N, --images-other N," \
            "--threads N, --only LIST, --budget S, --processes N, --keep-raw, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]] || { echo "run_all.sh: --processes expects a positive integer, got \"$PROCESSES\"" >&2; exit 2; }
[[ "$SETS" =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || { echo "run_all.sh: --sets expects names like realistic,uniform, got \"$SETS\"" >&2; exit 2; }
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
[ "$KEEP_RAW" = 1 ] || rm -rf "$RAW"
mkdir -p "$RAW" "$OUTDIR"
log_to "$OUTDIR/run_all.log"
want() { [[ ",$ONLY," == *",$1,"* ]]; }

BATCH=256; PREFETCH=2; DEVICE=gpu; IT=30; REP=5; SMOKE_ARG=()
if [ "$SMOKE" = 1 ]; then
  BATCH=8; N_REALISTIC=64; N_OTHER=64; THREADS=2; DEVICE=cpu; IT=2; REP=2; SMOKE_ARG=(--cpu-smoke)
fi
echo "run_all: bundle $BUNDLE, batch $BATCH, $THREADS threads, prefetch $PREFETCH, sets $SETS" \
     "(realistic $N_REALISTIC files, others $N_OTHER), sections $ONLY, budget $BUDGET_S s"
machine_facts
LIST_SETS=${SETS//,/ }
set_files() { if [ "$1" = realistic ]; then echo "$N_REALISTIC"; else echo "$N_OTHER"; fi; }
if want e2e || want decode; then
  for s in $LIST_SETS; do
    dataset "$WORK/data/$s" "$s" "$(set_files "$s")" || exit 1
    warm_cache "$WORK/data/$s"
  done
  phase "run_all/data"
fi

# use_set NAME: the data set the next rows read (DATA, SET, EPOCH: batches in one epoch).
use_set() {
  SET=$1
  DATA=$WORK/data/$1
  local n
  n=$(set_files "$1")
  EPOCH=$(( (n + BATCH - 1) / BATCH ))
}
CENV=$(conveyor_env); DENV=$(dali_env)
knobs() {  # the pipeline files' CONVEYOR_BENCH_* knobs: knobs CAPTURE
  echo "CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=$1 CONVEYOR_BENCH_BATCH=$BATCH" \
       "CONVEYOR_BENCH_THREADS=$THREADS CONVEYOR_BENCH_PREFETCH=$PREFETCH CONVEYOR_BENCH_DATA=$DATA"
}
# The rows' raw files are <section>_<set>_<row>[_p<process>].json, tagged role=, set=, process=.
cli() {  # cli NAME YAML CAPTURE ROLE [PROCESS]: `conveyor bench` (the C++ path), first epoch untimed
  measure "$1" 180 "$CENV $(knobs "$3")" "role=$4 set=$SET process=${5:-1} path=cli" -- "$CONVEYOR_BIN" bench \
    "$PIPES/$2" --json --warmup $((EPOCH + 3)) --iterations "$IT" --repeats "$REP"
}
pyconv() {  # pyconv NAME YAML CAPTURE ROLE [PROCESS]: the Python loop a training script writes:
  # conveyor.torch.Loader over conveyor.Pipeline, torch tensors out
  measure "$1" 180 "$CENV" "role=$4 set=$SET process=${5:-1} path=python via=loader" -- "$PYTHON" \
    "$E2E/conveyor_e2e.py" --loader --yaml "$PIPES/$2" --capture "$3" --data "$DATA" --batch "$BATCH" \
    --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" --repeats "$REP" "${SMOKE_ARG[@]}"
}
dali() {  # dali NAME MODE ROLE PROCESS [ARGS...]
  local name=$1 mode=$2 role=$3 p=$4
  shift 4
  measure "$name" 180 "$DENV" "role=$role set=$SET process=$p" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" --mode "$mode" \
    --data "$DATA" --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" \
    --repeats "$REP" "${SMOKE_ARG[@]}" "$@"
}
# fused_pair SET P, unfused_pair SET P: the compared rows of process P, the Conveyor row right before
# its DALI peer, so the machine's drift over the minutes of this section stays out of their ratio.
fused_pair() {
  use_set "$1"
  pyconv "e2e_${SET}_conveyor_py_fused_capture_p$2" train_fused.yaml on conveyor_py_fused_on "$2"
  dali "e2e_${SET}_dali_fused_p$2" fused dali_fused "$2"
}
unfused_pair() {
  use_set "$1"
  pyconv "e2e_${SET}_conveyor_py_unfused_capture_p$2" train_unfused.yaml on conveyor_py_unfused_on "$2"
  dali "e2e_${SET}_dali_unfused_p$2" unfused dali_unfused "$2"
}
# others SET: the rows measured once. realistic: every other contender; any other set: the C++ fused row.
others() {
  use_set "$1"
  cli "e2e_${SET}_conveyor_cli_fused_capture" train_fused.yaml true conveyor_cli_fused_on
  [ "$SET" = realistic ] || return 0
  cli "e2e_${SET}_conveyor_cli_unfused_capture" train_unfused.yaml true conveyor_cli_unfused_on
  cli "e2e_${SET}_conveyor_cli_fused_eager" train_fused.yaml false conveyor_cli_fused_off
  cli "e2e_${SET}_conveyor_cli_unfused_eager" train_unfused.yaml false conveyor_cli_unfused_off
  pyconv "e2e_${SET}_conveyor_py_fused_eager" train_fused.yaml off conveyor_py_fused_off
  pyconv "e2e_${SET}_conveyor_py_unfused_eager" train_unfused.yaml off conveyor_py_unfused_off
  measure "e2e_${SET}_torchvision_gpu" 240 "" "role=torchvision_gpu set=$SET process=1" -- "$PYTHON" \
    "$E2E/torchvision_gpu.py" --data "$DATA" --batch "$BATCH" "${SMOKE_ARG[@]}"
  measure "e2e_${SET}_dataloader_15_workers" 240 "" "role=dataloader set=$SET process=1" -- "$PYTHON" \
    "$E2E/dataloader_cpu.py" --data "$DATA" --batch "$BATCH" "${SMOKE_ARG[@]}"
}
# decode_rows SET: decode alone through the pipelines (and torchvision's on realistic), each row
# skipped once the budget is spent.
optional() {  # optional FUNCTION NAME ARGS...: FUNCTION NAME ARGS, unless over the budget (then listed)
  over_budget "$2" && return 0
  "$@"
}
decode_rows() {
  use_set "$1"
  optional cli "decode_${SET}_conveyor_cli_decode_only" decode_only.yaml true conveyor_decode_pipeline
  optional dali "decode_${SET}_dali_decode" decode dali_decode 1
  [ "$SET" = realistic ] || return 0
  optional dali "decode_${SET}_dali_decode_engines" decode dali_decode_engines 1 --hw-load 1.0  # beside engines_only
  optional dali "decode_${SET}_dali_decode_cuda" decode dali_decode_cuda 1 --hw-load 0.0        # beside cuda_only
  optional measure "decode_${SET}_torchvision_decode" 120 "" "role=torchvision_decode set=$SET process=1" -- \
    "$PYTHON" "$SUITE/decode_peers.py" "$DATA" --batch "$BATCH" --seconds 5
}
# decode_bench SET: GpuDecoder alone (decode_gpu_bench): each backend, the mix, RN50 windows and two
# decoders side by side; the fixed-share sweep (DecodeShare, ~100 s) is left out: run
# decode_gpu_bench alone for it (docs/decoding.md).
decode_bench() {
  [ "$SMOKE" = 0 ] || return 0
  over_budget "decode_gpu_bench on $1" && return 0
  CONVEYOR_DECODE_BENCH_DIR=$WORK/data/$1 gbench "decode_gpu_bench_$1" "$BENCHBIN/decode_gpu_bench" \
    --benchmark_filter='^(DecodeBench|TwoDecoders)/'
}
has_set() { [[ ",$SETS," == *",$1,"* ]]; }

# Mandatory: every row's first process. Then, while the budget lasts, in order of what the targets
# need: the fused pairs' other processes (issue 34's headline and uniform targets take the median
# process), decode alone, decode_gpu_bench on the uniform set (docs/decoding.md's decode targets),
# the realistic unfused pair's other processes (no target depends on them), decode_gpu_bench on the
# other sets.
if want e2e; then
  echo "== 1. end to end: sets $SETS, batch $BATCH, 224x224 float16 CHW"
  for s in $LIST_SETS; do
    fused_pair "$s" 1
    [ "$s" = realistic ] && unfused_pair "$s" 1
    others "$s"
  done
  phase "run_all/e2e, process 1"
  # The compared pairs again, each in new processes (docs/decoding.md: the decoder's call time
  # differs per process by up to 2x, on both sides): make_results.py takes the median process.
  for p in $(seq 2 "$PROCESSES"); do
    for s in $LIST_SETS; do
      over_budget "section 1, $s, fused pair, process $p" && break 2
      fused_pair "$s" "$p"
    done
  done
  [ "$PROCESSES" -gt 1 ] && phase "run_all/e2e, fused pairs, processes 2-$PROCESSES"
fi
if want decode; then
  echo "== 2a. decode alone"
  for s in $LIST_SETS; do decode_rows "$s"; done
  phase "run_all/decode, pipelines"
  if has_set uniform && [ "$SMOKE" = 0 ]; then decode_bench uniform; phase "run_all/decode_gpu_bench, uniform"; fi
fi
if want e2e && has_set realistic && [ "$PROCESSES" -gt 1 ]; then
  for p in $(seq 2 "$PROCESSES"); do
    over_budget "section 1, realistic, unfused pair, process $p" && break
    unfused_pair realistic "$p"
  done
  phase "run_all/e2e, realistic unfused pair, processes 2-$PROCESSES"
fi
if want decode && [ "$SMOKE" = 0 ]; then
  for s in $LIST_SETS; do [ "$s" = uniform ] || decode_bench "$s"; done
  phase "run_all/decode_gpu_bench, other sets"
fi

if want overhead && ! over_budget "2. Python iteration overhead"; then
  echo "== 2b. iteration overhead: 10 GPU ops at batch 1, from Python"
  measure conveyor_py_overhead_capture 120 "$CENV" "role=conveyor_overhead_on" -- "$PYTHON" "$E2E/conveyor_e2e.py" \
    --mode overhead --capture on --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
  measure conveyor_py_overhead_eager 120 "$CENV" "role=conveyor_overhead_off" -- "$PYTHON" "$E2E/conveyor_e2e.py" \
    --mode overhead --capture off --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
  measure dali_overhead 180 "$DENV" "role=dali_overhead" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" --mode overhead \
    --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
  phase "run_all/overhead"
fi

if want executor && [ "$SMOKE" = 0 ] && ! over_budget "2. executor_bench"; then
  echo "== 2c. executor overhead (C++) and staging vs a raw pinned copy"
  gbench executor_bench "$BENCHBIN/executor_bench" --benchmark_min_time=0.2
  phase "run_all/executor"
fi

if want kernels && [ "$SMOKE" = 0 ] && ! over_budget "2. kernels vs roofline and PyTorch"; then
  echo "== 2d. kernels: effective GB/s vs a device copy (roofline) and PyTorch"
  gbench pointwise_bench "$BENCHBIN/pointwise_bench" --benchmark_min_time=0.2
  over_budget "geometry_bench" || gbench geometry_bench "$BENCHBIN/geometry_bench" --benchmark_min_time=0.2
  over_budget "augment_bench" || gbench augment_bench "$BENCHBIN/augment_bench" --benchmark_min_time=0.1
  over_budget "augment_peers" || { timeout 110 "$PYTHON" "$SUITE/augment_peers.py" --deadline 90 > "$RAW/text_augment_peers.txt" 2>&1; echo "augment_peers: rc $?"; }
  over_budget "tensor_bench" || gbench tensor_bench "$BENCHBIN/tensor_bench" --benchmark_min_time=0.2
  over_budget "tensor_peers" || { timeout 100 "$PYTHON" "$SUITE/tensor_peers.py" > "$RAW/text_tensor_peers.txt" 2>&1; echo "tensor_peers: rc $?"; }
  for peer in pointwise_peers geometry_peers; do  # torch eager, torch.compile, torchvision v2
    [ -f "$SUITE/$peer.py" ] || continue
    over_budget "$peer" && break
    timeout 120 "$PYTHON" "$SUITE/$peer.py" > "$RAW/text_$peer.txt" 2>&1
    echo "$peer: rc $?"
  done
  phase "run_all/kernels"
fi

echo "== results ($SECONDS s so far)"
echo "run_all/total (--only $ONLY): $SECONDS s" >> "$RAW/timings.txt"
pack
echo "run_all: done in $SECONDS s"
end_log
