#!/usr/bin/env bash
# Issue 34's routing questions in one device call (~6 min on the H100 machine): the decoder's GPU
# tests, then Conveyor's fused training pipeline (`conveyor bench`, C++) on the realistic set, the
# uniform set and each one-property variant, with the routing options A/B'd on the realistic set,
# and GPU memory (nvidia-smi's device figure, max over the
# run) beside each. Everything into $OUT: route.tsv (one line per run: name, JSON), tests.log,
# decode_bench.json, route.log.
#   on the GPU machine, the bundle carried:  bash tools/device_route_check.sh [--no-tests]
set -uo pipefail
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || exit 1
B=$PWD/.bundle
export LD_LIBRARY_PATH=$B/lib:$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUTDIR=${OUT:-$PWD/out}
W=/tmp/route
mkdir -p "$OUTDIR" "$W"
exec > >(tee "$OUTDIR/route.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$B/commit"
start=$SECONDS
SETS="realistic:4096 uniform:2048 varied:2048 varied_progressive:2048 varied_422:2048 varied_444:2048 varied_gray:2048 varied_quality:2048 varied_large:2048"
pids=()  # (a bare `wait` would also wait for the log's tee, which never ends)
for sn in $SETS; do
  name=${sn%%:*}; n=${sn##*:}
  mkdir -p "$W/$name/0"
  "$B/make_test_images" "$W/$name/0" --dataset "$name" --count "$n" > "$W/$name.txt" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for sn in $SETS; do name=${sn%%:*}; echo "== $name"; cat "$W/$name.txt"; done
echo "data: $((SECONDS - start)) s"
find "$W" -type f -exec cat {} + > /dev/null

if [ "${1:-}" != --no-tests ]; then
  t0=$SECONDS
  OUT=$OUTDIR/tests "$B/run.sh" --only 'decoders__gpu' > "$OUTDIR/tests.log" 2>&1
  tail -3 "$OUTDIR/tests.log"
  echo "tests: $((SECONDS - t0)) s"
fi

# bench NAME SET [ENV...]: conveyor bench --json on the fused pipeline; max GPU memory beside it.
bench() {
  local name=$1 set=$2; shift 2
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$W/mem.$name" &
  local smi=$!
  env "$@" CONVEYOR_BENCH_DEVICE=gpu CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=256 CONVEYOR_BENCH_THREADS=8 \
    CONVEYOR_BENCH_PREFETCH=2 CONVEYOR_BENCH_DATA="$W/$set" timeout 120 "$B/conveyor" bench \
    "$B/suite/pipelines/train_fused.yaml" --json --warmup 11 --iterations 30 --repeats 5 > "$W/$name.json" 2> "$W/$name.err"
  local rc=$?
  kill $smi 2>/dev/null; wait $smi 2>/dev/null
  local mem; mem=$(sort -n "$W/mem.$name" | tail -1)
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$mem" "$(tr -d '\n' < "$W/$name.json")" >> "$OUTDIR/route.tsv"
  echo "$name rc $rc mem ${mem} MiB: $(grep -o '"samples_per_s"[^}]*}' "$W/$name.json" | head -1)"
  tail -2 "$W/$name.err" | grep -v '^$' || true
}
: > "$OUTDIR/route.tsv"
for sn in $SETS; do name=${sn%%:*}; bench "$name" "$name"; done
bench realistic_progressive_cuda realistic CONVEYOR_JPEG_PROGRESSIVE=cuda
bench realistic_prealloc_grow realistic CONVEYOR_JPEG_PREALLOC_GROW=1
bench realistic_other_cuda realistic CONVEYOR_JPEG_OTHER_CHROMA=cuda
bench varied_progressive_cuda varied_progressive CONVEYOR_JPEG_PROGRESSIVE=cuda
bench varied_large_prealloc_grow varied_large CONVEYOR_JPEG_PREALLOC_GROW=1
echo "benches: $((SECONDS - start)) s"
echo "total: $((SECONDS - start)) s"
