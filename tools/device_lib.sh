# shellcheck shell=bash
# Sourced by the one-call device scripts (tools/device_decoder_check.sh, device_memory_check.sh,
# device_profile.sh, device_overhead_check.sh), run on the GPU machine from the repository root
# with .gpu_bundle carried: unpacks the bundle once, sets B (the bundle), OUT (what comes back,
# with logs/ and summary S), the bundle's libraries, and bench/lib.sh's helpers (find_bundle,
# images, conveyor_env).
#
#   device_photos                      2,048 photo-like 500x375 q90 JPEGs in $PHOTOS/0, made once
#   decode_bench LABEL FILTER FIELDS [ENV=VAL ...]
#                                      decode_gpu_bench's cases matching FILTER on the photos, log
#                                      $OUT/logs/decode_LABEL.log; prints "LABEL case field=value ..."
#                                      per case for the counters matching the regex FIELDS
#   fused_e2e LABEL [ENV=VAL ...]      `conveyor bench` of the fused training pipeline on the
#                                      photos, measured from outside (bench/e2e/measure.py);
#                                      prints "LABEL: images/s, GPU memory (and our device pool's
#                                      share of it), host memory"; PIPELINE=train_unfused.yaml
#                                      in the environment benches the unfused one
OUT=${OUT:-$PWD/.device_out}
mkdir -p "$OUT/logs"
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || { echo "no bundle: run tools/gpu_bundle.sh first"; exit 1; }
B=$PWD/.bundle
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S=$OUT/summary.txt
# shellcheck source=../bench/lib.sh
source "$B/suite/lib.sh"
find_bundle "$B" || exit 1
PHOTOS=/root/device_photos

device_photos() { images "$PHOTOS" 2048 500 375 >/dev/null; }

decode_bench() {
  local label=$1 filter=$2 fields=$3 line
  shift 3
  env "$@" CONVEYOR_DECODE_BENCH_DIR="$PHOTOS" timeout 120 "$B/bench/decode_gpu_bench" \
      --benchmark_filter="$filter" >"$OUT/logs/decode_$label.log" 2>&1
  grep -E '^[A-Za-z]+/' "$OUT/logs/decode_$label.log" | while read -r line; do
    echo "$label $(echo "$line" | tr ' ' '\n' | grep -E "^[A-Za-z]+/|$fields" | paste -sd' ')"
  done
}

fused_e2e() {
  local label=$1 kv
  shift
  local envs=(--env "CONVEYOR_BENCH_DATA=$PHOTOS")
  for kv in "$@"; do envs+=(--env "$kv"); done
  timeout 150 python3 "$B/suite/e2e/measure.py" --out "$OUT/logs/e2e_$label.json" --label "$label" "${envs[@]}" \
      -- "$B/conveyor" bench "$B/suite/pipelines/${PIPELINE:-train_fused.yaml}" --json --warmup 12 --iterations 30 --repeats 5 \
      >"$OUT/logs/e2e_$label.log" 2>&1
  python3 - "$OUT/logs/e2e_$label.json" "$label" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"{sys.argv[2]}: no result ({e})")
m = d.get("measure", {})
rate = (d.get("samples_per_s") or {}).get("median") or d.get("error")
pools = d.get("memory_mib", {})
print(f"{sys.argv[2]}: images/s {rate}, GPU memory {m.get('gpu_mem_peak_mib')} MiB (process {m.get('gpu_mem_process_peak_mib')}; "
      f"our device pool: peak in use {pools.get('device_peak_in_use')}, from the driver {pools.get('device_from_driver')}), "
      f"host {m.get('host_mem_peak_mib')} MiB")
PY
}
