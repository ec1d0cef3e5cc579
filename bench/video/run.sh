#!/usr/bin/env bash
# Issue 39's video benchmark: clips/s and frames/s of 16-frame clips at 224x224 from 720p H.264 and
# HEVC files, Conveyor (readers.video on NVDEC + resize, bench/pipelines/video_bench.yaml) against
# DALI 2.4's fn.readers.video (+ fn.resize) on the same files in the same run, each contender a
# process of its own under bench/e2e/measure.py with NVDEC utilisation sampled beside it
# (nvdec_sampler.py). Writes $OUT/video/: RESULTS.md, results.json, raw.tar.gz (every JSON, log and
# sample file), run.log.
#
#   on the GPU machine (DALI staged by tools/stage_dali.sh, the bundle unpacked):
#     bash .bundle/suite/video/run.sh [--budget 200]
#   here, to check the scripts (CPU decoding, tiny files, numbers meaningless; DALI skipped):
#     bash bench/video/run.sh --cpu-smoke
#
# | option        | meaning                                                              | default |
# |---------------|----------------------------------------------------------------------|---------|
# | --bundle DIR  | the unpacked bundle                                                  | found (lib.sh) |
# | --budget S    | seconds for everything, data included: optional rows that would end  | 200     |
# |               | past it are skipped and listed (counted from $BENCH_START when set)  |         |
# | --files N     | files per codec                                                      | 24      |
# | --seconds S   | seconds per file (25 fps)                                            | 6       |
# | --batch N     | clips per batch                                                      | 8       |
# | --threads N   | CPU threads of Conveyor and DALI (num_threads), matched              | 8       |
# | --cpu-smoke   | CPU, 4 tiny files a codec, batch 4, every row                        |         |
#
# Data (first call on a machine; kept under $WORK/video while the settings match): per codec N MP4
# files of 1280x720 at 25 fps, keyframe every 2 s (GOP 50), 2 B-frames, camera-like texture and
# grain (make_test_videos --detail), made by the bundle's make_test_videos (libx264 veryfast crf 20,
# libx265 ultrafast crf 22, one thread each, files in parallel). Rows, in this order (core rows always,
# the rest while the budget allows; est. s on the H100, unmeasured):
# | rows                                                         | est. s                   |
# |--------------------------------------------------------------|--------------------------|
# | data, both codecs, 48 files (first call only)                | 25-40                    |
# | stride 1, per codec: Conveyor C++ (conveyor bench), DALI     | 2 x (12 + 25)            |
# | (budget) DALI experimental.readers.video, per codec          | 2 x 25                   |
# | (budget) stride 2, per codec: Conveyor C++, DALI             | 2 x (12 + 25)            |
# | (budget) Conveyor Python loop, per codec                     | 2 x 15                   |
# | (budget) torchcodec on cuda (a skipped row when absent), per codec | 2 x 5 (absent)     |
# Each row: its first epoch + 3 iterations untimed, then 5 blocks of 10 batches timed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE=$(cd "$HERE/.." && pwd)
BUNDLE_ARG=""; BUDGET_S=200; SMOKE=0; N_FILES=24; SECONDS_PER_FILE=6; BATCH=8; THREADS=8
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) BUNDLE_ARG=${2:-}; shift ;;
    --budget) BUDGET_S=${2:-}; shift ;;
    --files) N_FILES=${2:-}; shift ;;
    --seconds) SECONDS_PER_FILE=${2:-}; shift ;;
    --batch) BATCH=${2:-}; shift ;;
    --threads) THREADS=${2:-}; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "video/run.sh: unknown argument \"$1\" (expected --bundle DIR, --budget S, --files N, --seconds S," \
            "--batch N, --threads N, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
for v in BUDGET_S N_FILES SECONDS_PER_FILE BATCH THREADS; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "video/run.sh: $v expects a positive integer, got \"${!v}\"" >&2; exit 2; }
done
source "$SUITE/lib.sh"
RAW=$WORK/video_raw   # not run_all.sh's raw/: the two suites may share a WORK
VOUT=$OUTDIR/video
VDATA=$WORK/video
find_bundle "$BUNDLE_ARG" || exit 1
MAKE_VIDEOS=""
for f in "$BUNDLE/make_test_videos" "$BUNDLE/tools/make_test_videos/make_test_videos"; do
  [ -x "$f" ] && { MAKE_VIDEOS=$f; break; }
done
PLUGIN_DIR=""
for f in "$BUNDLE/libconveyor_video.so" "$BUNDLE/cli/libconveyor_video.so"; do
  [ -f "$f" ] && { PLUGIN_DIR=$(dirname "$f"); break; }
done
[ -n "$MAKE_VIDEOS" ] || { echo "video/run.sh: no make_test_videos in $BUNDLE (tools/gpu_bundle.sh packs it)" >&2; exit 1; }
[ -n "$PLUGIN_DIR" ] || { echo "video/run.sh: no libconveyor_video.so in $BUNDLE (tools/gpu_bundle.sh packs it)" >&2; exit 1; }
rm -rf "$RAW"
mkdir -p "$RAW" "$VOUT" "$VDATA"
log_to "$VOUT/run.log"

W=1280; H=720; FPS=25; GOP=50; BFRAMES=2; DEVICE=gpu; PREFETCH=2; IT=10; REP=5; SMOKE_ARG=(); STRIDES="1 2"
JOBS=$(nproc)
if [ "$SMOKE" = 1 ]; then
  W=320; H=180; GOP=12; N_FILES=4; SECONDS_PER_FILE=2; BATCH=4; THREADS=2; DEVICE=cpu; IT=2; REP=2
  SMOKE_ARG=(--cpu-smoke); BUDGET_S=100000
fi
FRAMES=$((SECONDS_PER_FILE * FPS))
echo "video: bundle $BUNDLE, ${N_FILES} files a codec of ${W}x${H} ${FRAMES} frames, batch $BATCH, $THREADS threads," \
     "device $DEVICE, budget $BUDGET_S s"
machine_facts
printf 'batch: %s\nthreads: %s\nprefetch: %s\ndevice: %s\n' "$BATCH" "$THREADS" "$PREFETCH" "$DEVICE" >> "$RAW/machine.txt"

# The data: $N_FILES files a codec in $VDATA/CODEC/0/ (one class folder: the readers want one),
# both codecs' files made in one parallel pool, kept while $VDATA/CODEC/STAMP matches the settings.
stamp() { echo "$1 ${W}x${H} fps $FPS frames $FRAMES gop $GOP bframes $BFRAMES files $N_FILES detail 1"; }
kept() { [ "$(cat "$VDATA/$1/STAMP" 2>/dev/null)" = "$(stamp "$1")" ] &&
         [ "$(find "$VDATA/$1/0" -name '*.mp4' -size +0 | wc -l)" -eq "$N_FILES" ]; }
make_data() {
  local todo=() codec start=$SECONDS
  for codec in h264 hevc; do
    if kept "$codec"; then echo "data $codec: kept ($VDATA/$codec)"; else todo+=("$codec"); fi
  done
  [ ${#todo[@]} -eq 0 ] && return 0
  for codec in "${todo[@]}"; do rm -rf "${VDATA:?}/$codec"; mkdir -p "$VDATA/$codec/0"; done
  # One job per file, each under its own timeout and the pool under one: a stuck encoder ends the
  # run, never hangs it. xargs appends a job's line (codec, file number) as $8 $9; the encoders
  # come from the bundle's lib/.
  for codec in "${todo[@]}"; do seq -w 0 $((N_FILES - 1)) | sed "s/^/$codec /"; done |
    timeout 300 xargs -P "$JOBS" -L 1 sh -c 'LD_LIBRARY_PATH="$7${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec timeout 120 \
      "$0" --codec "$8" --container mp4 --size "$1" --frames "$2" --fps "$3" --gop "$4" --bframes "$5" --seed "$9" \
      --detail "$6/$8/0/clip_$9.mp4"' "$MAKE_VIDEOS" "${W}x${H}" "$FRAMES" "$FPS" "$GOP" "$BFRAMES" "$VDATA" \
      "${LIBDIR:-}" > "$RAW/data.log" 2>&1
  local rc=$?
  for codec in "${todo[@]}"; do
    local made
    made=$(find "$VDATA/$codec/0" -name '*.mp4' -size +0 | wc -l)
    if [ "$rc" != 0 ] || [ "$made" -ne "$N_FILES" ]; then
      tail -5 "$RAW/data.log" >&2
      echo "video/run.sh: make_test_videos made $made of $N_FILES $codec files (rc $rc; 124: over its timeout;" \
           "log: $RAW/data.log)" >&2
      return 1
    fi
    stamp "$codec" > "$VDATA/$codec/STAMP"
  done
  echo "data (${todo[*]}, $N_FILES files each): $((SECONDS - start)) s" | tee -a "$RAW/timings.txt"
}
# data_facts CODEC: what the results say of the files ($RAW/data_CODEC.txt).
data_facts() {
  local bytes encoder
  bytes=$(find "$VDATA/$1/0" -name '*.mp4' -printf '%s\n' | awk '{s += $1} END {print s}')
  encoder=$(grep -m1 -o "$1/0/clip_[0-9]*.mp4: lib[a-z0-9]*" "$RAW/data.log" 2>/dev/null | sed 's/.*: //')
  {
    echo "files: $N_FILES x ${W}x${H}, ${FRAMES} frames at $FPS fps (${SECONDS_PER_FILE} s), MP4"
    echo "GOP: $GOP frames, B-frames: $BFRAMES"
    echo "encoder: ${encoder:-made by an earlier call}"
    echo "bitrate: $(awk -v b="$bytes" -v n="$N_FILES" -v s="$SECONDS_PER_FILE" 'BEGIN {printf "%.2f Mbit/s mean", b * 8 / n / s / 1e6}')"
  } > "$RAW/data_$1.txt"
  sed "s/^/data $1: /" "$RAW/data_$1.txt"
}
make_data || exit 1
for codec in h264 hevc; do data_facts "$codec"; done
warm_cache "$VDATA"
phase "video/data"

CENV="$(conveyor_env) CONVEYOR_PLUGIN_PATH=$PLUGIN_DIR"; DENV=$(dali_env)
clips_per_epoch() {  # clips_per_epoch STRIDE: the readers' clips over the data set (step 16)
  local span=$(( 15 * $1 + 1 ))
  [ "$FRAMES" -ge "$span" ] || { echo 0; return; }
  echo $(( N_FILES * ((FRAMES - span) / 16 + 1) ))
}
# row NAME CODEC STRIDE ROLE TIMEOUT ENV -- COMMAND...: one contender under measure.py, the NVDEC
# sampler beside it (stopped by its pid after), the row's seconds into timings.txt.
row() {
  local name=$1 codec=$2 stride=$3 role=$4 t=$5 envs=$6 start=$SECONDS spid
  shift 6
  "$PYTHON" "$HERE/nvdec_sampler.py" --out "$RAW/$name.nvdec.csv" --max-seconds $((t + 30)) &
  spid=$!
  measure "$name" "$t" "$envs" "role=$role codec=$codec stride=$stride" "$@"
  kill -TERM "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  echo "$name: $((SECONDS - start)) s" >> "$RAW/timings.txt"
}
# fits NAME SECONDS: whether a row of about SECONDS still ends inside the budget; else listed as skipped.
fits() {
  local t
  t=$(elapsed)
  [ $((t + $2)) -le "$BUDGET_S" ] && return 0
  echo "$1: skipped, $t s spent, ~$2 s more would pass the $BUDGET_S s budget" | tee -a "$RAW/skipped.txt"
  return 1
}
py_args() {  # py_args CODEC STRIDE: the Python contenders' common options
  echo --data "$VDATA/$1" --codec "$1" --stride "$2" --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" \
       --iterations "$IT" --repeats "$REP" "${SMOKE_ARG[@]}"
}
conveyor_cli() {  # conveyor_cli CODEC STRIDE
  local epoch=$(( ($(clips_per_epoch "$2") + BATCH - 1) / BATCH ))
  row "${1}_s${2}_conveyor_cli" "$1" "$2" conveyor_cli 150 "$CENV CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=true
    CONVEYOR_BENCH_BATCH=$BATCH CONVEYOR_BENCH_THREADS=$THREADS CONVEYOR_BENCH_PREFETCH=$PREFETCH
    CONVEYOR_BENCH_STRIDE=$2 CONVEYOR_BENCH_DATA=$VDATA/$1" -- "$CONVEYOR_BIN" bench "$PIPES/video_bench.yaml" \
    --json --warmup $((epoch + 3)) --iterations "$IT" --repeats "$REP"
}
conveyor_py() {  # conveyor_py CODEC STRIDE
  # shellcheck disable=SC2046
  row "${1}_s${2}_conveyor_python" "$1" "$2" conveyor_python 150 "$CENV" -- "$PYTHON" "$HERE/conveyor_video.py" $(py_args "$1" "$2")
}
dali() {  # dali CODEC STRIDE legacy|experimental
  # shellcheck disable=SC2046
  row "${1}_s${2}_dali_$3" "$1" "$2" "dali_$3" 180 "$DENV" -- "$DALI_PYTHON" "$HERE/dali_video.py" --reader "$3" $(py_args "$1" "$2")
}
torch_row() {  # torch_row CODEC STRIDE
  # shellcheck disable=SC2046
  row "${1}_s${2}_torchcodec" "$1" "$2" torchcodec 150 "" -- "$PYTHON" "$HERE/torch_video.py" $(py_args "$1" "$2")
}

# The core rows first: each Conveyor row right before its DALI peer, so drift stays out of the ratio.
for codec in h264 hevc; do
  conveyor_cli "$codec" 1
  dali "$codec" 1 legacy
done
phase "video/core rows"
for codec in h264 hevc; do fits "${codec}_s1_dali_experimental" 30 && dali "$codec" 1 experimental; done
for s in $STRIDES; do
  [ "$s" = 1 ] && continue
  for codec in h264 hevc; do
    if fits "${codec}_s${s}_pair" 45; then conveyor_cli "$codec" "$s"; dali "$codec" "$s" legacy; fi
  done
done
for codec in h264 hevc; do fits "${codec}_s1_conveyor_python" 20 && conveyor_py "$codec" 1; done
for codec in h264 hevc; do fits "${codec}_s1_torchcodec" 15 && torch_row "$codec" 1; done
phase "video/optional rows"

"$PYTHON" "$HERE/video_results.py" --raw "$RAW" --out "$VOUT" || echo "video/run.sh: video_results.py failed" >&2
tar czf "$VOUT/raw.tar.gz" -C "$WORK" "$(basename "$RAW")"
echo "video: $(ls "$VOUT" | paste -sd' ' -) in $VOUT ($(elapsed) s)"
end_log
