#!/usr/bin/env bash
# One device call (~4 minutes) for where the GPU memory of a training pipeline goes (issue 13's
# target: no more than DALI's). Run on the GPU machine from the repository root with .gpu_bundle
# carried (tools/gpu_bundle.sh), or with .bundle already unpacked; logs and a summary under $OUT.
#
#   1. the decoder GPU binaries: each nvJPEG handle's allocations through our allocators, and the
#      device memory the engines' decoder takes outside our pools (NvjpegMemoryCountedPerHandle);
#   2. the fused and unfused training pipelines (`conveyor bench`, capture on), twice each: the
#      process's GPU memory peak from outside (NVML) beside our device pool's peak in use and
#      what it took from the driver — the rest is the CUDA context and the libraries' own;
#   3. decode_gpu_bench (mix, engines only, RN50 windows): images/s and each handle's memory.
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$S"
cat "$B/commit" >>"$S"

echo "== 1. decoder GPU tests" | tee -a "$S"
OUT="$OUT/logs/tests" timeout 240 "$B/run.sh" --only 'decoders__gpu__' 2>&1 | tail -9 | tee -a "$S"
grep -h "engines' handle" "$OUT"/logs/tests/*.log | tee -a "$S"

echo "== 2. training pipelines: GPU memory, ours and the rest" | tee -a "$S"
device_photos
for run in 1 2; do
  fused_e2e "fused$run" | tee -a "$S"
  PIPELINE=train_unfused.yaml fused_e2e "unfused$run" | tee -a "$S"
done

echo "== 3. decode_gpu_bench: images/s and nvJPEG's memory per handle" | tee -a "$S"
decode_bench mem 'DecodeBench/(auto_mix|engines_only|random_crop_auto)' 'items_per_second|_allocs=|_MiB=' | tee -a "$S"
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
