#!/usr/bin/env bash
# Issue 34's question "what does the decoder wait for" in one device call (~6 min), on a machine
# without Nsight Systems: the GPU tests named by $TESTS (default: the decoders', orientation and
# pipelines'), the realistic set, then `conveyor bench` of the fused training pipeline plain and
# under tools/cupti_trace (CUPTI injection: every API call, kernel and copy), summarised by
# tools/cupti_trace/summarize.py. Carry .gpu_bundle with .gpu_bundle/cupti/ holding
# libcupti_trace.so and libcupti.so.13 (tools/cupti_trace/pack.sh). Into $OUT: trace.log,
# trace_<name>.txt summaries, stacks_<name>.txt (tools/cupti_trace's stacks), tests.log and failing tests' logs.
#   TRACE_RUNS="name:pipeline.yaml[:ENV=V,...] ..." picks the traced runs (default: fused, unfused).
set -uo pipefail
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || exit 1
SUITE=$PWD/.bundle/suite
source "$SUITE/lib.sh"
find_bundle "" || exit 1
B=$BUNDLE
CUPTI=$PWD/.gpu_bundle/cupti
mkdir -p "$OUTDIR" "$RAW"
exec > >(tee "$OUTDIR/trace.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$B/commit"
start=$SECONDS
if [ -n "${TESTS-decoders__gpu|orientation|pipelines_gpu_test}" ]; then
  OUT=$OUTDIR/tests "$B/run.sh" --only "${TESTS-decoders__gpu|orientation|pipelines_gpu_test}" > "$OUTDIR/tests.log" 2>&1
  grep -E "passed .* failed" "$OUTDIR/tests.log" | tail -20
  for f in "$OUTDIR"/tests/*.log; do grep -q "FAILED" "$f" || rm -f "$f"; done
  rm -rf "$OUTDIR/tests/xml"
  echo "tests: $((SECONDS - start)) s"
fi
dataset "$WORK/data/realistic" realistic 4096 > /dev/null && cat "$WORK/data/realistic/SUMMARY.txt" | tail -3
warm_cache "$WORK/data"
run_bench() {  # name pipeline tracer-or-empty iterations repeats env...
  local name=$1 pipe=$2 trace=$3 iters=$4 reps=$5; shift 5
  local pre=()
  [ -n "$trace" ] && pre=(CUDA_INJECTION64_PATH="$CUPTI/libcupti_trace.so" CUPTI_TRACE_OUT="$RAW/$name"
                          CUPTI_TRACE_MIN_US=300)
  env "$@" "${pre[@]}" LD_LIBRARY_PATH="$LIBDIR:$CUPTI" CONVEYOR_BENCH_DEVICE=gpu CONVEYOR_BENCH_CAPTURE=true \
    CONVEYOR_BENCH_BATCH=256 CONVEYOR_BENCH_THREADS=8 CONVEYOR_BENCH_PREFETCH=2 \
    CONVEYOR_BENCH_DATA="$WORK/data/realistic" timeout 150 \
    "$CONVEYOR_BIN" bench "$SUITE/pipelines/$pipe" --json --warmup 11 --iterations "$iters" --repeats "$reps" \
    > "$RAW/$name.json" 2> "$RAW/$name.err"
  echo "$name rc $?: $(grep -o '"samples_per_s"[^}]*}' "$RAW/$name.json" | head -1)"
  grep -v '^$' "$RAW/$name.err" | tail -3
}
RUNS=${TRACE_RUNS:-fused:train_fused.yaml unfused:train_unfused.yaml}
for run in $RUNS; do
  IFS=: read -r name pipe envs <<< "$run"
  IFS=, read -r -a envlist <<< "${envs:-}"
  run_bench "${name}_plain" "$pipe" "" 30 5 "${envlist[@]}"
  run_bench "$name" "$pipe" trace 30 1 "${envlist[@]}"
  python3 "$PWD/tools/cupti_trace/summarize.py" "$RAW/$name" > "$OUTDIR/trace_$name.txt" 2>&1
  head -70 "$OUTDIR/trace_$name.txt"
  cp "$RAW/$name.stacks.txt" "$OUTDIR/stacks_$name.txt" 2>/dev/null
done
echo "total: $((SECONDS - start)) s"
