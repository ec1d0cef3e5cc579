#!/usr/bin/env bash
# One device call (~7 minutes) for the decoder's GPU memory against DALI's (issues 9, 13): what
# nvJPEG's allocations and our 64 KiB slack on each of them cost per handle, and whether the
# engines' path needs the slack. Run on the GPU machine from the repository root with .gpu_bundle
# carried (tools/gpu_bundle.sh); logs and a summary under $OUT.
#
#   1. the decoder GPU binaries (allocator counts, CONVEYOR_NVJPEG_ENGINES_SLACK=0 decoding the
#      same pixels) and the allocator test;
#   2. memcheck of the window tests (windows at every image corner) and the allocator test with
#      the engines' slack off, beside 1 (reads past an engines' buffer would show here);
#   3. decode_gpu_bench (mix, engines only, RN50 windows) with the engines' slack on and off:
#      images/s and each handle's allocations, MiB and slack MiB;
#   4. the fused training pipeline (`conveyor bench`, capture on) with the engines' slack on and
#      off: images/s and GPU memory peak from outside (bench/e2e/measure.py);
#   5. decode_gpu_bench with the engines' share fixed at 50..100% (DecodeShare): does the engines'
#      time per call grow with their images, and which share is fastest (issue 9's targets)?
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
cat "$B/commit" >>"$S"

# 1 and 2 side by side (both correctness; the benchmarks below run alone).
(CONVEYOR_NVJPEG_ENGINES_SLACK=0 OUT="$OUT/logs/memcheck" timeout 260 "$B/run.sh" --sanitize-only \
    --only 'decoders__gpu__(gpu_decoder_roi_gpu|nvjpeg_allocators_gpu)_test' --tools memcheck \
    --jobs 2 --sanitize-timeout 250 >"$OUT/logs/memcheck.txt" 2>&1) &
echo "== 1. decoder GPU tests" | tee -a "$S"
OUT="$OUT/logs/tests" timeout 240 "$B/run.sh" --only 'decoders__gpu__' 2>&1 | tail -9 | tee -a "$S"
grep -h "engines' slack" "$OUT"/logs/tests/*.log | tee -a "$S"
wait
echo "== 2. memcheck, engines' slack off (windows at every image corner)" | tee -a "$S"
grep -E "rc [0-9]|^sanitize" "$OUT/logs/memcheck.txt" | tee -a "$S"

echo "== 3. decode_gpu_bench, engines' slack on / off" | tee -a "$S"
device_photos
for slack in 1 0; do
  decode_bench "slack$slack" 'DecodeBench/(auto_mix|engines_only|random_crop_auto)' 'items_per_second|_allocs=|_MiB=' \
      CONVEYOR_NVJPEG_ENGINES_SLACK=$slack | tee -a "$S"
done

echo "== 4. fused training pipeline, engines' slack on / off" | tee -a "$S"
for slack in 1 0; do
  fused_e2e "slack$slack" CONVEYOR_NVJPEG_ENGINES_SLACK=$slack | tee -a "$S"
done

echo "== 5. decode_gpu_bench, engines' share fixed" | tee -a "$S"
decode_bench share 'DecodeShare' 'items_per_second|hw_host_ms|hw_gpu_ms|^cuda_ms|call_ms|^wait_ms' | tee -a "$S"
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
