#!/usr/bin/env bash
# Issue 36's benchmarks in one device call (~6 min): the fused training pipeline fed from a folder
# of files, from WebDataset tar shards (local, and over HTTP from a loopback server), and from
# TFRecord files — the same images (the realistic set), the same run, interleaved twice; images/s,
# CPU cores and GPU memory measured from outside (bench/e2e/measure.py). Also the time
# `conveyor shards` takes to write both and `conveyor index` to index them (MB/s). Carry
# .gpu_bundle; into $OUT: shards.log, shards.tsv (name, images/s median and min, CPU cores, MiB).
# Then each reader alone (bench/pipelines/read_*.yaml: no decode), SHARDS_READ_REPS times (default 2).
#   SHARDS_SET=realistic:4096 (default) or uniform:2048; SHARDS_SIZE=64M (the shard size target);
#   a short call: SHARDS_REPS=1 SHARDS_WARMUP=5 SHARDS_ITERS=12 SHARDS_REPEATS=3
set -uo pipefail
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || exit 1
SUITE=$PWD/.bundle/suite
source "$SUITE/lib.sh"
find_bundle "" || exit 1
mkdir -p "$OUTDIR" "$RAW"
exec > >(tee "$OUTDIR/shards.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$BUNDLE/commit"
SET=${SHARDS_SET:-realistic:4096}
NAME=${SET%%:*}
DATA=$WORK/data/$NAME
dataset "$DATA" "$NAME" "${SET##*:}" > /dev/null || exit 1
tail -1 "$DATA/SUMMARY.txt"
SH=$WORK/shards/$NAME
rm -rf "$SH" && mkdir -p "$SH/wds" "$SH/tfr" "$SH/idx"
export LD_LIBRARY_PATH=$LIBDIR
mb=$(du -sm "$DATA/0" | cut -f1)
timed() {  # label command...: runs it, prints the seconds and the data's MB/s
  local t0; t0=$(date +%s.%N)
  "${@:2}" > "$RAW/$1.out" 2>&1 || { echo "$1 failed:"; tail -5 "$RAW/$1.out"; return 1; }
  local t1; t1=$(date +%s.%N)
  python3 -c "import sys; s=$t1-$t0; print(f'$1: {s:.2f} s, {$mb/s:.0f} MB/s of images')"
}
timed shards_webdataset "$CONVEYOR_BIN" shards --format webdataset --output "$SH/wds" --shard-size "${SHARDS_SIZE:-64M}" --file-root "$DATA" || exit 1
timed shards_tfrecord "$CONVEYOR_BIN" shards --format tfrecord --output "$SH/tfr" --shard-size "${SHARDS_SIZE:-64M}" --file-root "$DATA" || exit 1
ls "$SH/wds" | head -3; echo "$(ls "$SH/wds"/*.tar | wc -l) tar shards, $(ls "$SH/tfr"/*.tfrecord | wc -l) TFRecord files"
timed index_webdataset "$CONVEYOR_BIN" index webdataset "$SH"/wds/*.tar -o "$SH/idx"
timed index_tfrecord "$CONVEYOR_BIN" index tfrecord "$SH"/tfr/*.tfrecord -o "$SH/idx"
warm_cache "$DATA"; warm_cache "$SH"
# The loopback server (the fetch layer tests' own: Range, keep-alive, threads).
coproc SERVER { exec python3 "$PWD/tests/operators/readers/io/http_test_server.py" --root "$SH/wds" --exit-on-stdin-eof; }
read -r _ PORT <&"${SERVER[0]}"
echo "loopback server on port $PORT"
tars=("$SH"/wds/*.tar)
last=$(basename "${tars[-1]}" .tar); first=$(basename "${tars[0]}" .tar)
prefix=${first%%[0-9]*}; lo=${first#"$prefix"}; hi=${last#"$prefix"}
URL="http://127.0.0.1:$PORT/$prefix{$lo..$hi}.tar"
echo "URL pattern: $URL"
: > "$OUTDIR/shards.tsv"
run() {  # name pipeline shards
  local name=$1 pipe=$2 shards=$3
  timeout 170 python3 "$SUITE/e2e/measure.py" --out "$RAW/$name.json" --label "$name" \
    --env "CONVEYOR_BENCH_DATA=$DATA" --env "CONVEYOR_BENCH_SHARDS=$shards" \
    --env CONVEYOR_BENCH_DEVICE=gpu --env CONVEYOR_BENCH_BATCH=256 --env CONVEYOR_BENCH_THREADS=8 \
    -- "$CONVEYOR_BIN" bench "$SUITE/pipelines/$pipe" --json --warmup "${SHARDS_WARMUP:-11}" --iterations "${SHARDS_ITERS:-30}" --repeats "${SHARDS_REPEATS:-5}" \
    > "$RAW/$name.log" 2>&1
  python3 - "$RAW/$name.json" "$name" "$OUTDIR/shards.tsv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); name = sys.argv[2]
if "error" in r:
    print(f"{name}: error: {r['error'][-400:]}"); sys.exit(0)
s = r.get("samples_per_s", {}); m = r.get("measure", {})
line = (f"{name}\t{s.get('median', 0):.0f}\t{s.get('min', 0):.0f}\t{m.get('process_cpu_cores_busy', 0):.2f}\t"
        f"{m.get('gpu_mem_peak_mib', 0):.0f}")
open(sys.argv[3], "a").write(line + "\n")
print(f"{name}: {s.get('median', 0):,.0f} images/s (min {s.get('min', 0):,.0f}), "
      f"{m.get('process_cpu_cores_busy', 0):.2f} CPU cores, {m.get('gpu_mem_peak_mib', 0):.0f} MiB")
PY
}
for rep in $(seq 1 "${SHARDS_REPS:-2}"); do
  run "folder_$rep" train_fused.yaml ""
  run "webdataset_$rep" train_fused_wds.yaml "$SH/wds/*.tar"
  run "webdataset_http_$rep" train_fused_wds.yaml "$URL"
  run "tfrecord_$rep" train_fused_tfr.yaml "$SH/tfr/*.tfrecord"
done
# The readers alone (no decode; CPU pipelines, bytes and labels out): each reader's own ceiling, in
# images/s and MB/s of encoded data, interleaved SHARDS_READ_REPS times (0: skip).
mean_kb=$(python3 -c "import sys; print($mb * 1048576 / 1000 / $(find "$DATA/0" -type f ! -name MANIFEST.tsv | wc -l))")
for rep in $(seq 1 "${SHARDS_READ_REPS:-2}"); do
  for v in "folder:read_folder.yaml:" "webdataset:read_wds.yaml:$SH/wds/*.tar" "webdataset_http:read_wds.yaml:$URL" \
           "tfrecord:read_tfr.yaml:$SH/tfr/*.tfrecord"; do
    IFS=: read -r name pipe shards <<< "$v"
    [ "$name" = webdataset_http ] && shards=$URL
    run "read_${name}_$rep" "$pipe" "$shards"
  done
done
python3 - "$OUTDIR/shards.tsv" "$mean_kb" <<'PY'
import sys
kb = float(sys.argv[2])
for line in open(sys.argv[1]):
    f = line.split("\t")
    if f[0].startswith("read_"):
        print(f"{f[0]}: {float(f[1]) * kb / 1000:,.0f} MB/s of encoded images (median), {float(f[2]) * kb / 1000:,.0f} (min)")
PY
exec {SERVER[1]}>&-
