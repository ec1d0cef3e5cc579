#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool runs it in the repository root, with
# .gpu_bundle carried): unpack the bundle, run what is asked, pack every log into $OUT.
#
#   tools/device_check.sh [tests] [sanitize] [bench] [peers] [python] [--only REGEX] [--tools LIST]
#                         [--sanitize-timeout S] [--images N]
#
# tests:    every bundled test binary (.bundle/run.sh)
# sanitize: also compute-sanitizer on every GPU test binary (run.sh --sanitize)
# bench:    the Google Benchmark binaries (run.sh --bench)
# peers:    the PyTorch/torchvision peer scripts in .bundle/peers (same GPU, same run)
# python:   the pytest suite against PyTorch, CuPy, JAX, Numba
# --images N: generate N photo-like 500x375 q90 JPEGs first (CONVEYOR_BENCH_IMAGES points at them)
set -uo pipefail
OUT=${OUT:-$PWD/.device_out}
mkdir -p "$OUT"
tar xJf .gpu_bundle/bundle.tar.xz || { echo "no bundle: run tools/gpu_bundle.sh first"; exit 1; }
B=$PWD/.bundle
RUN_ARGS=(); PEERS=0; IMAGES=0; TESTS=0
while [ $# -gt 0 ]; do
  case "$1" in
    tests) TESTS=1 ;;
    sanitize) RUN_ARGS+=(--sanitize) ;;
    bench) RUN_ARGS+=(--bench) ;;
    python) RUN_ARGS+=(--python) ;;
    peers) PEERS=1 ;;
    --only|--tools|--sanitize-timeout) RUN_ARGS+=("$1" "$2"); shift ;;
    --images) IMAGES=$2; shift ;;
  esac
  shift
done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt"
nproc | sed 's/^/cpus: /' | tee -a "$OUT/device.txt"

if [ "$IMAGES" -gt 0 ] && [ -x "$B/make_test_images" ]; then
  export CONVEYOR_BENCH_IMAGES=/root/bench_images CONVEYOR_DECODE_BENCH_DIR=/root/bench_images
  LD_LIBRARY_PATH="$B/lib" "$B/make_test_images" "$CONVEYOR_BENCH_IMAGES" --photos "$IMAGES" > "$OUT/images.log" 2>&1
  echo "images: $(ls "$CONVEYOR_BENCH_IMAGES" | wc -l) files, $(du -sh "$CONVEYOR_BENCH_IMAGES" | cut -f1)"
fi

mkdir -p "$OUT/logs"
if [ "$TESTS" = 1 ] || [ ${#RUN_ARGS[@]} -gt 0 ]; then
  OUT="$OUT/logs" "$B/run.sh" "${RUN_ARGS[@]}" 2>&1 | tee "$OUT/run.log"
fi
if [ "$PEERS" = 1 ] && [ -d "$B/peers" ]; then
  for p in "$B"/peers/*.py; do
    echo "== peer $(basename "$p")"
    PYTHONUNBUFFERED=1 timeout 300 python3 "$p" ${CONVEYOR_BENCH_IMAGES:-} 2>&1 | tee "$OUT/logs/$(basename "$p" .py).log" | tail -30
  done
fi
# The device returns at most 8 files: everything detailed travels in one tarball.
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
