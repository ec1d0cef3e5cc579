#!/usr/bin/env bash
# One device call for the decoder questions of issue 9 (2026-11-25): do the JPEG engines wait for
# earlier work on the stream, what does the decoder's wait cost, and do engine-decoded images stay
# right with the GPU loaded. Run on the GPU machine from the repository root with .gpu_bundle
# carried (tools/gpu_bundle.sh); ~8 minutes; logs and a summary under $OUT.
#
#   1. the decoder GPU test binaries alone, each test three times (GTEST_REPEAT=3);
#   2. the same beside three compute-sanitizer jobs on the same GPU (the load under which engine
#      images came back wrong), the sanitizers' verdicts included;
#   3. decode_gpu_bench (mix, engines only, RN50 windows) with the engines' wait and without it
#      (CONVEYOR_JPEG_ENGINES_WAIT=0), on 2,048 photo-like 500x375 q90 JPEGs;
#   4. the fused training pipeline (`conveyor bench`, capture on) with and without the wait:
#      images/s and GPU memory from outside (bench/e2e/measure.py).
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
cat "$B/commit" >> "$S"
BINS='decoders__gpu__(gpu_decoder_gpu|gpu_decoder_roi_gpu|decoders_op_gpu|decode_pipeline_gpu|on_error_gpu)'

echo "== 1. decoder GPU tests alone, x3" | tee -a "$S"
OUT="$OUT/logs/alone" GTEST_REPEAT=3 timeout 200 "$B/run.sh" --only "$BINS" 2>&1 | tail -7 | tee -a "$S"

echo "== 2. the same beside three sanitizer jobs" | tee -a "$S"
(OUT="$OUT/logs/san" timeout 230 "$B/run.sh" --sanitize-only --only 'decoders__gpu__(gpu_decoder_roi_gpu|decoders_op_gpu)' \
    --tools memcheck,synccheck --jobs 3 --sanitize-timeout 220 >"$OUT/logs/san.log" 2>&1) &
sleep 5
OUT="$OUT/logs/loaded" GTEST_REPEAT=3 timeout 200 "$B/run.sh" --only "$BINS" 2>&1 | tail -7 | tee -a "$S"
wait
grep -E "rc [0-9]" "$OUT/logs/san.log" | tee -a "$S"
# gtest's XML keeps only the last repeat: failures of earlier repeats, from the logs.
for d in alone loaded; do
  echo "$d: $(grep -hcE '^\[  FAILED  \] .*\([0-9]+ ms\)$' "$OUT"/logs/$d/*.log | awk '{s += $1} END {print s + 0}') failed test runs over 3 repeats" |
    tee -a "$S"
done
# Whole-image errors and what the no-wait test saw, from every log.
grep -hE "without the wait" "$OUT"/logs/*/*.log | sort | uniq -c | tee -a "$S"
grep -hE "mean [0-9.]+$" "$OUT"/logs/*/*.log | awk -F'mean ' '$2 + 0 > 10' | sort | uniq -c | head -20 |
  sed 's/^/whole-image error: /' | tee -a "$S"

echo "== 3. decode_gpu_bench, engines' wait on / off" | tee -a "$S"
device_photos
for wait in 1 0; do
  decode_bench "wait$wait" 'DecodeBench/(auto_mix|engines_only|random_crop_auto)' \
      'items_per_second|wait_ms|call_ms|hw_share' CONVEYOR_JPEG_ENGINES_WAIT=$wait | tee -a "$S"
done

echo "== 4. fused training pipeline, engines' wait on / off" | tee -a "$S"
for wait in 1 0; do
  fused_e2e "wait$wait" CONVEYOR_JPEG_ENGINES_WAIT=$wait | tee -a "$S"
done
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
