#!/usr/bin/env bash
# Issue 13's benchmarks in one device call (about 8 minutes on the H100 machine): Conveyor against
# DALI 2.4, torchvision on the GPU and the PyTorch DataLoader on the same files, then decode alone,
# executor overhead (C++ and Python beside DALI's pipe.run()), staging, kernels. Writes
# RESULTS.md, results.json, raw.tar.gz (every JSON and log) and run_all.log into $OUT.
#
#   on the GPU machine, DALI staged first (tools/stage_dali.sh), the bundle carried:
#     tar xJf .gpu_bundle/bundle.tar.xz && bash .bundle/suite/run_all.sh
#   here, to check the scripts (CPU, tiny, numbers meaningless):
#     bash bench/run_all.sh --cpu-smoke
#
# | option        | meaning                                                       | default          |
# |---------------|---------------------------------------------------------------|------------------|
# | --bundle DIR  | the unpacked bundle                                           | found (lib.sh)   |
# | --images N    | photo-like 500x375 q90 JPEGs to generate                      | 2048 (8 batches) |
# | --threads N   | CPU threads of Conveyor and DALI (num_threads), matched       | 8                |
# | --only LIST   | sections, comma-separated: e2e,decode,overhead,executor,kernels| all             |
# | --processes N | processes per compared pair row (Conveyor Python / DALI, both  | 3                |
# |               | kinds): a decoder's speed differs per process, up to 2x        |                  |
# | --budget S    | optional sections after S seconds are skipped (and listed)    | 480              |
# | --cpu-smoke   | everything on the CPU at batch 8 with 64 images               |                  |
# Section 1 (e2e) always runs first; every contender reads the same files, batch 256, and gives
# 224x224 float16 CHW normalized with random flips and RandomResizedCrop-style windows.
set -uo pipefail
SUITE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUNDLE_ARG=""; N_IMAGES=2048; THREADS=8; ONLY="e2e,decode,overhead,executor,kernels"; BUDGET_S=480; SMOKE=0; PROCESSES=3
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE_ARG=$2; shift ;;
    --images) N_IMAGES=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --budget) BUDGET_S=$2; shift ;;
    --processes) PROCESSES=$2; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "run_all.sh: unknown argument \"$1\" (expected --bundle DIR, --images N, --threads N, --only LIST, --budget S, --processes N, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]] || { echo "run_all.sh: --processes expects a positive integer, got \"$PROCESSES\"" >&2; exit 2; }
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
rm -rf "$RAW"
mkdir -p "$RAW" "$OUTDIR"
log_to "$OUTDIR/run_all.log"
want() { [[ ",$ONLY," == *",$1,"* ]]; }

BATCH=256; PREFETCH=2; DEVICE=gpu; IT=30; REP=5; SMOKE_ARG=()
if [ "$SMOKE" = 1 ]; then
  BATCH=8; N_IMAGES=64; THREADS=2; DEVICE=cpu; IT=2; REP=2; SMOKE_ARG=(--cpu-smoke)
fi
DATA=$WORK/data/500x375
EPOCH=$(( (N_IMAGES + BATCH - 1) / BATCH ))
echo "run_all: bundle $BUNDLE, batch $BATCH, $THREADS threads, prefetch $PREFETCH, $N_IMAGES images, sections $ONLY"
machine_facts
images "$DATA" "$N_IMAGES" 500 375 || exit 1
warm_cache "$DATA"

CENV=$(conveyor_env); DENV=$(dali_env)
knobs() {  # the pipeline files' CONVEYOR_BENCH_* knobs: knobs CAPTURE [BATCH THREADS PREFETCH DATA]
  echo "CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=$1 CONVEYOR_BENCH_BATCH=${2:-$BATCH}" \
       "CONVEYOR_BENCH_THREADS=${3:-$THREADS} CONVEYOR_BENCH_PREFETCH=${4:-$PREFETCH} CONVEYOR_BENCH_DATA=${5:-$DATA}"
}
cli() {  # cli NAME YAML CAPTURE ROLE: `conveyor bench` (the C++ path), first epoch untimed
  measure "$1" 180 "$CENV $(knobs "$3")" "role=$4 path=cli" -- "$CONVEYOR_BIN" bench "$PIPES/$2" --json \
    --warmup $((EPOCH + 3)) --iterations "$IT" --repeats "$REP"
}
pyconv() {  # pyconv NAME YAML CAPTURE ROLE: conveyor.Pipeline from Python
  measure "$1" 180 "$CENV" "role=$4 path=python" -- "$PYTHON" "$E2E/conveyor_e2e.py" --yaml "$PIPES/$2" \
    --capture "$3" --data "$DATA" --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" \
    --iterations "$IT" --repeats "$REP" "${SMOKE_ARG[@]}"
}
dali() {  # dali NAME MODE ROLE [ARGS...]
  local name=$1 mode=$2 role=$3
  shift 3
  measure "$name" 180 "$DENV" "role=$role" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" --mode "$mode" --data "$DATA" \
    --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" --repeats "$REP" \
    "${SMOKE_ARG[@]}" "$@"
}

if want e2e; then
  echo "== 1. end to end: $N_IMAGES files, batch $BATCH, 224x224 float16 CHW"
  # The rows the targets compare run back to back (Conveyor's Python loop, then DALI), so the
  # machine's drift over the minutes of this section (RESULTS.md, section 3's repeats) stays out of
  # their ratios; then the other Conveyor variants.
  pyconv conveyor_py_fused_capture train_fused.yaml on conveyor_py_fused_on
  dali dali_fused fused dali_fused
  cli conveyor_cli_fused_capture train_fused.yaml true conveyor_cli_fused_on
  pyconv conveyor_py_unfused_capture train_unfused.yaml on conveyor_py_unfused_on
  dali dali_unfused unfused dali_unfused
  cli conveyor_cli_unfused_capture train_unfused.yaml true conveyor_cli_unfused_on
  cli conveyor_cli_fused_eager train_fused.yaml false conveyor_cli_fused_off
  cli conveyor_cli_unfused_eager train_unfused.yaml false conveyor_cli_unfused_off
  pyconv conveyor_py_fused_eager train_fused.yaml off conveyor_py_fused_off
  pyconv conveyor_py_unfused_eager train_unfused.yaml off conveyor_py_unfused_off
  measure torchvision_gpu 240 "" "role=torchvision_gpu" -- "$PYTHON" "$E2E/torchvision_gpu.py" --data "$DATA" \
    --batch "$BATCH" "${SMOKE_ARG[@]}"
  measure dataloader_15_workers 240 "" "role=dataloader" -- "$PYTHON" "$E2E/dataloader_cpu.py" --data "$DATA" \
    --batch "$BATCH" "${SMOKE_ARG[@]}"
  # The compared pairs again, each in new processes (docs/decoding.md: the decoder's call time
  # differs per process by up to 2x, on both sides): make_results.py takes the median process.
  for p in $(seq 2 "$PROCESSES"); do
    over_budget "section 1, process $p of the compared pairs" && break
    pyconv "conveyor_py_fused_capture_p$p" train_fused.yaml on conveyor_py_fused_on
    dali "dali_fused_p$p" fused dali_fused
    pyconv "conveyor_py_unfused_capture_p$p" train_unfused.yaml on conveyor_py_unfused_on
    dali "dali_unfused_p$p" unfused dali_unfused
  done
fi

if want decode && ! over_budget "2. decode alone"; then
  echo "== 2a. decode alone"
  cli conveyor_cli_decode_only decode_only.yaml true conveyor_decode_pipeline
  dali dali_decode decode dali_decode
  dali dali_decode_engines decode dali_decode_engines --hw-load 1.0   # beside GpuDecoder's engines_only
  dali dali_decode_cuda decode dali_decode_cuda --hw-load 0.0         # beside its cuda_only
  measure torchvision_decode 120 "" "role=torchvision_decode" -- "$PYTHON" "$SUITE/decode_peers.py" "$DATA" \
    --batch "$BATCH" --seconds 5
  if [ "$SMOKE" = 0 ]; then
    # Each backend, the mix, RN50 windows and two decoders side by side; the fixed-share sweep
    # (DecodeShare, ~100 s) is left out: run decode_gpu_bench alone for it (docs/decoding.md).
    CONVEYOR_DECODE_BENCH_DIR=$DATA gbench decode_gpu_bench "$BENCHBIN/decode_gpu_bench" \
      --benchmark_filter='^(DecodeBench|TwoDecoders)/'
  fi
fi

if want overhead && ! over_budget "2. Python iteration overhead"; then
  echo "== 2b. iteration overhead: 10 GPU ops at batch 1, from Python"
  measure conveyor_py_overhead_capture 120 "$CENV" "role=conveyor_overhead_on" -- "$PYTHON" "$E2E/conveyor_e2e.py" \
    --mode overhead --capture on --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
  measure conveyor_py_overhead_eager 120 "$CENV" "role=conveyor_overhead_off" -- "$PYTHON" "$E2E/conveyor_e2e.py" \
    --mode overhead --capture off --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
  measure dali_overhead 180 "$DENV" "role=dali_overhead" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" --mode overhead \
    --blocks 11 --block-iterations 1000 "${SMOKE_ARG[@]}"
fi

if want executor && [ "$SMOKE" = 0 ] && ! over_budget "2. executor_bench"; then
  echo "== 2c. executor overhead (C++) and staging vs a raw pinned copy"
  gbench executor_bench "$BENCHBIN/executor_bench" --benchmark_min_time=0.2
fi

if want kernels && [ "$SMOKE" = 0 ] && ! over_budget "2. kernels vs roofline and PyTorch"; then
  echo "== 2d. kernels: effective GB/s vs a device copy (roofline) and PyTorch"
  gbench pointwise_bench "$BENCHBIN/pointwise_bench" --benchmark_min_time=0.2
  over_budget "geometry_bench" || gbench geometry_bench "$BENCHBIN/geometry_bench" --benchmark_min_time=0.2
  for peer in pointwise_peers geometry_peers; do  # torch eager, torch.compile, torchvision v2
    [ -f "$SUITE/$peer.py" ] || continue
    over_budget "$peer" && break
    timeout 120 "$PYTHON" "$SUITE/$peer.py" > "$RAW/text_$peer.txt" 2>&1
    echo "$peer: rc $?"
  done
fi

echo "== results ($SECONDS s so far)"
pack
echo "run_all: done in $SECONDS s"
end_log
