#!/usr/bin/env bash
# One device call (~5 minutes): Nsight Compute on the resample kernels the resize targets of
# issue 10 are about (TwoTapKernel: linear without antialias and nearest; ResampleKernel: linear
# with antialias), from geometry_bench's 256 x 375x500x3 uint8 -> 224x224 batches; then, where
# Nsight Systems is installed, a timeline of decode_gpu_bench's automatic mix (issue 9: what the
# engines, the CUDA backend's kernels and copies and the host threads do in one call). Run on the
# GPU machine from the repository root with .gpu_bundle carried; reports under $OUT (text, one per
# case, the raw .ncu-rep / .nsys-rep files packed).
set -uo pipefail
source "$(dirname "$0")/device_lib.sh"
mkdir -p "$OUT/rep"
SECTIONS=(--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats
          --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section InstructionStats --section SourceCounters)
profile() {  # case kernel
  timeout 110 ncu --kernel-name "$2" --launch-skip 3 --launch-count 1 "${SECTIONS[@]}" \
      --export "$OUT/rep/$1" --force-overwrite \
      "$B/bench/geometry_bench" --benchmark_filter="BM_Resample/$1/" --benchmark_min_time=0.05 \
      >"$OUT/$1.txt" 2>&1
  echo "$1: rc $? $(grep -E 'Duration|Memory Throughput|Achieved Occupancy|Registers Per Thread' "$OUT/$1.txt" | tr -s ' ' | paste -sd';')"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$B/commit"
"$B/bench/geometry_bench" --benchmark_filter='BM_Resample' --benchmark_min_time=0.5 2>&1 | grep BM_
profile resize_linear_noaa TwoTapKernel
profile resize_nearest TwoTapKernel
profile resize_linear_aa ResampleKernel
# The decoder's timeline (needs 2,048 photos; ~1 minute).
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  device_photos
  CONVEYOR_DECODE_BENCH_DIR=$PHOTOS timeout 120 "$NSYS" profile --trace cuda,osrt --sample none \
      --output "$OUT/rep/decode_mix" --force-overwrite true \
      "$B/bench/decode_gpu_bench" --benchmark_filter='DecodeBench/auto_mix' --benchmark_min_time=1 \
      >"$OUT/decode_mix_nsys.txt" 2>&1
  timeout 60 "$NSYS" stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum,osrt_sum \
      "$OUT/rep/decode_mix.nsys-rep" >>"$OUT/decode_mix_nsys.txt" 2>&1
  echo "nsys: $(grep -cE '^ +[0-9]' "$OUT/decode_mix_nsys.txt") rows in decode_mix_nsys.txt"
else
  echo "nsys: not installed on this machine"
fi
tar czf "$OUT/reps.tar.gz" -C "$OUT" rep && rm -rf "$OUT/rep"
