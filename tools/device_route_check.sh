#!/usr/bin/env bash
# Issue 34's routing questions in one device call (~7 min on the H100 machine): the benchmark data
# sets made where bench/run_all.sh and run_robustness.sh look for them ($WORK/data/<set>, kept for
# a later call on the same warm machine), the decoder's GPU tests, then Conveyor's fused training
# pipeline (`conveyor bench`, C++) on every set with the routing switches A/B'd on the realistic
# set, GPU memory (nvidia-smi's device figure, max over the run) and CPU cores busy (the process's
# user + system time over its wall time, set-up and warm-up included) beside each. Into $OUT:
# route.tsv (one line per run: name, rc, MiB, cores, JSON), tests.log and the failing tests' logs, route.log.
#   on the GPU machine, the bundle carried:  bash tools/device_route_check.sh [--no-tests]
# A short A/B instead: ROUTE_SETS="realistic:4096 varied_444:2048" and ROUTE_RUNS="name:set[:ENV=V,...] ..."
# run only those; a name starting with "py" runs the Python loop (conveyor.torch.Loader) instead of
# `conveyor bench`. ROUTE_WARMUP: the C++ runs' warm-up iterations (11; more than an epoch lets
# nvJPEG's buffers reach every size before the timed part). ROUTE_TESTS: the GPU tests' regex
# (`run.sh --only`; all the decoder's and pipelines_gpu_test, ~255 s on the H200: pick the ones a
# change touched). Each C++ run's "cores" is over the whole
# process; its JSON's cpu_cores_busy over the timed part only, as the Loader's. ROUTE_BATCH_COSTS=1:
# after the runs, tools/batch_costs.py sets each C++ run's iteration times beside its batches' content
# (into batch_costs.log and batch_costs.tsv: which batches are slow, and what they hold). A run with
# CONVEYOR_JPEG_TRACE=200,CONVEYOR_JPEG_TRACE_FROM=0 among its settings: tools/decode_poles.py on its
# trace (decode_poles.log: which image holds each slow call).
set -uo pipefail
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || exit 1
SUITE=$PWD/.bundle/suite
source "$SUITE/lib.sh"
find_bundle "" || exit 1
B=$BUNDLE
mkdir -p "$OUTDIR" "$RAW"
exec > >(tee "$OUTDIR/route.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$B/commit"
start=$SECONDS
SETS=${ROUTE_SETS:-"realistic:4096 uniform:2048 varied:2048 varied_progressive:2048 varied_422:2048 varied_444:2048 varied_gray:2048 varied_quality:2048 varied_large:2048"}
pids=()  # (a bare `wait` would also wait for the log's tee, which never ends)
for sn in $SETS; do dataset "$WORK/data/${sn%%:*}" "${sn%%:*}" "${sn##*:}" > /dev/null & pids+=($!); done
wait "${pids[@]}"
for sn in $SETS; do cat "$WORK/data/${sn%%:*}/SUMMARY.txt"; done
echo "data: $((SECONDS - start)) s"
warm_cache "$WORK/data"

if [ "${1:-}" != --no-tests ]; then
  t0=$SECONDS
  OUT=$OUTDIR/tests "$B/run.sh" --only "${ROUTE_TESTS:-decoders__gpu|pipelines_gpu_test}" \
    > "$OUTDIR/tests.log" 2>&1
  grep -E "passed .* failed" "$OUTDIR/tests.log" | tail -12
  echo "tests: $((SECONDS - t0)) s"
  # Only the failing binaries' logs come back (a call returns at most 8 files).
  for f in "$OUTDIR"/tests/*.log; do grep -q "FAILED" "$f" || rm -f "$f"; done
  rm -rf "$OUTDIR/tests/xml"
fi

# bench NAME SET [ENV...]: conveyor bench --json on the fused pipeline; max GPU memory beside it.
bench() {
  local name=$1 set=$2; shift 2
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$RAW/mem.$name" &
  local smi=$!
  # The run's own settings come last: env keeps the last value of a variable.
  local rc TIMEFORMAT='%R %U %S'
  { time env LD_LIBRARY_PATH="$LIBDIR" CONVEYOR_BENCH_DEVICE=gpu CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=256 \
    CONVEYOR_BENCH_THREADS=8 CONVEYOR_BENCH_PREFETCH=2 CONVEYOR_BENCH_DATA="$WORK/data/$set" "$@" timeout 120 \
    "$CONVEYOR_BIN" bench "$SUITE/pipelines/train_fused.yaml" --json --warmup "${ROUTE_WARMUP:-11}" --iterations 30 --repeats 5 \
    > "$RAW/$name.json" 2> "$RAW/$name.err"; rc=$?; } 2> "$RAW/time.$name"
  local cores; cores=$(awk '{ if ($1 > 0) printf "%.2f", ($2 + $3) / $1 }' "$RAW/time.$name")
  kill $smi 2>/dev/null; wait $smi 2>/dev/null
  local mem; mem=$(sort -n "$RAW/mem.$name" | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$mem" "$cores" "$(tr -d '\n' < "$RAW/$name.json")" >> "$OUTDIR/route.tsv"
  echo "$name rc $rc mem ${mem} MiB cores ${cores} ($(grep -o '"cpu_cores_busy": [0-9.]*' "$RAW/$name.json")): $(grep -o '"samples_per_s"[^}]*}' "$RAW/$name.json" | head -1)"
  grep -o '"memory_mib"[^}]*}' "$RAW/$name.json" | head -1
  tail -2 "$RAW/$name.err" | grep -v '^$' || true
}
: > "$OUTDIR/route.tsv"
# loader NAME SET [ENV...]: the Python loop (conveyor.torch.Loader) through bench/e2e/measure.py.
# It reads CONVEYOR_CUDA_SCHEDULE but no CONVEYOR_JPEG_* switch (those are the CLI's): a Loader
# run with one measures the defaults.
loader() {
  local name=$1 set=$2; shift 2
  measure "$name" 180 "$(conveyor_env) $*" "role=py set=$set" -- "$PYTHON" "$E2E/conveyor_e2e.py" --loader \
    --yaml "$PIPES/train_fused.yaml" --capture on --data "$WORK/data/$set" --batch 256 --threads 8 --prefetch 2 \
    --iterations 30 --repeats 5
  printf '%s\t0\t-\t%s\n' "$name" "$(tr -d '\n' < "$RAW/$name.json")" >> "$OUTDIR/route.tsv"
}
if [ -n "${ROUTE_RUNS:-}" ]; then
  for run in $ROUTE_RUNS; do
    IFS=: read -r name set envs <<< "$run"
    IFS=, read -r -a envlist <<< "${envs:-}"
    case $name in py*) loader "$name" "$set" "${envlist[@]}" ;; *) bench "$name" "$set" "${envlist[@]}" ;; esac
  done
  if [ "${ROUTE_BATCH_COSTS:-0}" = 1 ]; then
    for set in $(for run in $ROUTE_RUNS; do IFS=: read -r name s _ <<< "$run"; case $name in py*) ;; *) echo "$s" ;; esac; done | sort -u); do
      jsons=()
      for run in $ROUTE_RUNS; do
        IFS=: read -r name s _ <<< "$run"
        [ "$s" = "$set" ] && [[ $name != py* ]] && jsons+=("$RAW/$name.json")
      done
      env $(conveyor_env) "$PYTHON" "$B/batch_costs.py" --data "$WORK/data/$set" --tsv "$OUTDIR/batch_costs_$set.tsv" \
        "${jsons[@]}" 2>&1 | tee -a "$OUTDIR/batch_costs.log"
    done
  fi
  # Runs traced (CONVEYOR_JPEG_TRACE=N among their settings): which image holds each slow call.
  for run in $ROUTE_RUNS; do
    IFS=: read -r name _ <<< "$run"
    [ -f "$RAW/$name.err" ] && grep -q "decoder trace: call" "$RAW/$name.err" &&
      "$PYTHON" "$B/decode_poles.py" --from "${ROUTE_WARMUP:-11}" "$RAW/$name.err" 2>&1 | tee -a "$OUTDIR/decode_poles.log"
  done
  echo "total: $((SECONDS - start)) s"
  exit 0
fi
bench realistic realistic
bench uniform uniform
for sn in $SETS; do
  case ${sn%%:*} in realistic|uniform) ;; *) bench "${sn%%:*}" "${sn%%:*}" ;; esac
done
bench realistic_again realistic
bench realistic_other_engines realistic CONVEYOR_JPEG_OTHER_CHROMA=engines_own_call
# The Python loop a training script writes (conveyor.torch.Loader), one process per set.
for set in realistic uniform; do
  loader "loader_$set" "$set"
done
echo "total: $((SECONDS - start)) s"
