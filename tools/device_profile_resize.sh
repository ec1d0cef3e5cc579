#!/usr/bin/env bash
# One device call (~3 minutes): Nsight Compute on the resample kernels the resize targets of
# issue 10 are about (TwoTapKernel: linear without antialias and nearest; ResampleKernel: linear
# with antialias), from geometry_bench's 256 x 375x500x3 uint8 -> 224x224 batches. Run on the GPU
# machine from the repository root with .gpu_bundle carried; reports under $OUT (text, one per
# case, plus the raw .ncu-rep files packed).
set -uo pipefail
OUT=${OUT:-$PWD/.device_out}
mkdir -p "$OUT/rep"
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || { echo "no bundle: run tools/gpu_bundle.sh first"; exit 1; }
B=$PWD/.bundle
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SECTIONS=(--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats
          --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section InstructionStats --section SourceCounters)
profile() {  # case kernel
  timeout 150 ncu --kernel-name "$2" --launch-skip 3 --launch-count 1 "${SECTIONS[@]}" \
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
tar czf "$OUT/ncu-reps.tar.gz" -C "$OUT" rep && rm -rf "$OUT/rep"
