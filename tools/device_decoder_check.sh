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
OUT=${OUT:-$PWD/.device_out}
mkdir -p "$OUT/logs"
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || { echo "no bundle: run tools/gpu_bundle.sh first"; exit 1; }
B=$PWD/.bundle
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
cat "$B/commit" >> "$OUT/summary.txt"
BINS='decoders__gpu__(gpu_decoder_gpu|gpu_decoder_roi_gpu|decoders_op_gpu|decode_pipeline_gpu|on_error_gpu)'

echo "== 1. decoder GPU tests alone, x3" | tee -a "$OUT/summary.txt"
OUT="$OUT/logs/alone" GTEST_REPEAT=3 timeout 200 "$B/run.sh" --only "$BINS" 2>&1 | tail -7 | tee -a "$OUT/summary.txt"

echo "== 2. the same beside three sanitizer jobs" | tee -a "$OUT/summary.txt"
(OUT="$OUT/logs/san" timeout 230 "$B/run.sh" --sanitize-only --only 'decoders__gpu__(gpu_decoder_roi_gpu|decoders_op_gpu)' \
    --tools memcheck,synccheck --jobs 3 --sanitize-timeout 220 >"$OUT/logs/san.log" 2>&1) &
sleep 5
OUT="$OUT/logs/loaded" GTEST_REPEAT=3 timeout 200 "$B/run.sh" --only "$BINS" 2>&1 | tail -7 | tee -a "$OUT/summary.txt"
wait
grep -E "rc [0-9]" "$OUT/logs/san.log" | tee -a "$OUT/summary.txt"
# gtest's XML keeps only the last repeat: failures of earlier repeats, from the logs.
for d in alone loaded; do
  echo "$d: $(grep -hcE '^\[  FAILED  \] .*\([0-9]+ ms\)$' "$OUT"/logs/$d/*.log | awk '{s += $1} END {print s + 0}') failed test runs over 3 repeats" |
    tee -a "$OUT/summary.txt"
done
# Whole-image errors and what the no-wait test saw, from every log.
grep -hE "without the wait" "$OUT"/logs/*/*.log | sort | uniq -c | tee -a "$OUT/summary.txt"
grep -hE "mean [0-9.]+$" "$OUT"/logs/*/*.log | awk -F'mean ' '$2 + 0 > 10' | sort | uniq -c | head -20 |
  sed 's/^/whole-image error: /' | tee -a "$OUT/summary.txt"

echo "== 3. decode_gpu_bench, engines' wait on / off" | tee -a "$OUT/summary.txt"
IMAGES=/root/decoder_check_images
if [ ! -d "$IMAGES/0" ]; then
  mkdir -p "$IMAGES/0" && "$B/make_test_images" "$IMAGES/0" --photos 2048 --width 500 --height 375 --quality 90 >/dev/null
fi
for wait in 1 0; do
  CONVEYOR_JPEG_ENGINES_WAIT=$wait CONVEYOR_DECODE_BENCH_DIR=$IMAGES timeout 120 "$B/bench/decode_gpu_bench" \
      --benchmark_filter='DecodeBench/(auto_mix|engines_only|random_crop_auto)' >"$OUT/logs/decode_wait$wait.log" 2>&1
  grep DecodeBench "$OUT/logs/decode_wait$wait.log" | tr ' ' '\n' |
    grep -E "^DecodeBench|items_per_second|wait_ms|hw_ready_wait_ms|call_ms|hw_share" | paste -sd' ' |
    sed "s/DecodeBench/\nwait=$wait DecodeBench/g" | tee -a "$OUT/summary.txt"
done

echo "== 4. fused training pipeline, engines' wait on / off" | tee -a "$OUT/summary.txt"
for wait in 1 0; do
  timeout 150 python3 "$B/suite/e2e/measure.py" --out "$OUT/logs/e2e_wait$wait.json" --label "fused_wait$wait" \
      --env CONVEYOR_BENCH_DATA=$IMAGES --env CONVEYOR_JPEG_ENGINES_WAIT=$wait -- \
      "$B/conveyor" bench "$B/suite/pipelines/train_fused.yaml" --json --warmup 12 --iterations 30 --repeats 5 \
      >"$OUT/logs/e2e_wait$wait.log" 2>&1
  python3 - "$OUT/logs/e2e_wait$wait.json" "$wait" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
m = d.get("measure", {})
rate = (d.get("samples_per_s") or {}).get("median") or d.get("error")
print(f"wait={sys.argv[2]}: images/s {rate}, GPU memory {m.get('gpu_mem_peak_mib')} MiB, host {m.get('host_mem_peak_mib')} MiB")
PY
done
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
