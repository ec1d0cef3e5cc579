#!/usr/bin/env bash
# The 10-minute soak of issue 15 on the GPU machine, from the bundle (tools/gpu_bundle.sh):
# 2,048 photo-like 500x375 JPEGs, the training pipeline bench/pipelines/train_fused.yaml (nvJPEG ROI
# decode -> resize -> crop_mirror_normalize with coin-flip mirror, float16 CHW, graph capture),
# conveyor_soak consuming every batch on its own stream, one line per minute.
#
# A device call lasts at most 600 s, so the soak runs in its own session and outlives the call
# that starts it; a second call, made at once (the machine stays warm ~30 s), collects it:
#   call 1:  bash tools/soak/run_soak.sh start     (returns WAIT seconds after it began, default 540)
#   call 2:  bash tools/soak/run_soak.sh collect   (waits for the end; copies the log and JSON to $OUT)
# SECONDS_TO_SOAK (600), WARMUP (3000 iterations, ~30 s: the first 60 were too few for the
# decoder's output buffers to reach their size; they grew once more in the first minute of the
# 2026-11-25 run), BATCH (256) and THREADS (8) change the run. The GPU's clocks go to gpu.csv.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$PWD/.bundle
DIR=/root/soak
case "${1:-}" in
  start)
    if [ ! -d "$B" ]; then
      tar xJf .gpu_bundle/bundle.tar.xz || python3 -c "import tarfile; tarfile.open('.gpu_bundle/bundle.tar.xz').extractall()" || exit 1
    fi
    mkdir -p "$DIR"
    # readers.file wants one folder per class: the photos go into IMAGES/0.
    IMAGES=/root/soak_images
    if [ ! -d "$IMAGES/0" ]; then
      mkdir -p "$IMAGES/0"
      LD_LIBRARY_PATH=$B/lib "$B/make_test_images" "$IMAGES/0" --photos 2048 --width 500 --height 375 --quality 90 \
        >"$DIR/images.log" 2>&1 || { cat "$DIR/images.log"; exit 1; }
    fi
    CONVEYOR_BENCH_DATA=$IMAGES CONVEYOR_BENCH_BATCH=${BATCH:-256} CONVEYOR_BENCH_THREADS=${THREADS:-8} \
      setsid nohup env LD_LIBRARY_PATH="$B/lib" "$B/conveyor_soak" bench/pipelines/train_fused.yaml \
      --seconds "${SECONDS_TO_SOAK:-600}" --interval 60 --warmup "${WARMUP:-3000}" --json "$DIR/soak.json" \
      >"$DIR/soak.log" 2>&1 </dev/null &
    echo $! >"$DIR/pid"
    # The GPU's clocks, temperature and power each minute, beside the soak's lines (a slower minute:
    # the GPU throttling, or Conveyor?).
    setsid nohup nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu \
      --format=csv -l 60 >"$DIR/gpu.csv" 2>&1 </dev/null &
    echo $! >"$DIR/smi.pid"
    # And the CPU's: the mean clock of the cores each minute (the decoder's host work is CPU-bound).
    setsid nohup bash -c 'while :; do echo "$(date +%T) $(awk "/cpu MHz/ {s += \$4; n++} END {printf \"%.0f MHz\", s / n}" /proc/cpuinfo)"; sleep 60; done' \
      >"$DIR/cpu.txt" 2>&1 </dev/null &
    echo $! >>"$DIR/smi.pid"
    # Return early when the soak ends before its time (a start-up error): the call is not wasted.
    # WAIT counts from this script's start (bash's SECONDS): making the photos takes ~40 s of the
    # call, and a call that outlives its 600 s is cut off before it prints (2026-11-25).
    end=${WAIT:-540}
    while [ $SECONDS -lt $end ] && kill -0 "$(cat "$DIR/pid")" 2>/dev/null; do sleep 2; done
    cat "$DIR/soak.log"
    kill -0 "$(cat "$DIR/pid")" 2>/dev/null || { kill $(cat "$DIR/smi.pid") 2>/dev/null; echo "run_soak: the soak ended early"; exit 1; }
    ;;
  collect)
    while kill -0 "$(cat "$DIR/pid")" 2>/dev/null; do sleep 2; done
    kill $(cat "$DIR/smi.pid") 2>/dev/null
    cat "$DIR/soak.log" "$DIR/gpu.csv" "$DIR/cpu.txt"
    cp "$DIR/soak.log" "$DIR/soak.json" "$DIR/gpu.csv" "$DIR/cpu.txt" "${OUT:-/tmp}/" 2>/dev/null
    grep -q ": pass" "$DIR/soak.log"
    ;;
  *) echo "usage: run_soak.sh start|collect"; exit 2 ;;
esac
