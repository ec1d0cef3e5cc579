#!/usr/bin/env bash
# Conveyor alone end to end (no DALI to stage, ~30 s on the H100 machine): the Python loop and
# `conveyor bench` on the fused training pipeline, capture on, alternated ROUNDS times, each its own
# process, with the stage thread's split for both (bench/e2e/conveyor_e2e.py's ms_per_iteration;
# `conveyor bench --json`'s ms_per_iteration and decoder_ms_per_call). JSONs and logs into $OUT.
#   on the GPU machine, the bundle carried:  bash tools/device_e2e_conveyor.sh [ROUNDS] [read_ahead]
# ROUNDS default 3. With `read_ahead`, each round runs both paths with the reader's read_ahead off
# and on (CONVEYOR_BENCH_READ_AHEAD), names suffixed _ra0 / _ra1: the A/B of readers' read ahead.
# With `affinity`, with CONVEYOR_THREAD_AFFINITY auto and off, names suffixed _auto / _off; with
# `engine_threads`, with CONVEYOR_JPEG_ENGINE_THREADS 1 and 2, names suffixed _et1 / _et2.
set -uo pipefail
ROUNDS=${1:-3}
MODES=("")
[ "${2:-}" = read_ahead ] && MODES=(_ra0 _ra1)
[ "${2:-}" = affinity ] && MODES=(_auto _off)
[ "${2:-}" = engine_threads ] && MODES=(_et1 _et2)
[ -d .bundle ] || tar xJf .gpu_bundle/bundle.tar.xz || exit 1
SUITE=$PWD/.bundle/suite
source "$SUITE/lib.sh"
find_bundle "" || exit 1
rm -rf "$RAW" && mkdir -p "$RAW" "$OUTDIR"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat .bundle/commit
DATA=$WORK/data/500x375
images "$DATA" 2048 500 375 || exit 1
warm_cache "$DATA"
CENV=$(conveyor_env)
KNOBS="CONVEYOR_BENCH_DEVICE=gpu CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=256 CONVEYOR_BENCH_THREADS=8"
KNOBS+=" CONVEYOR_BENCH_PREFETCH=2 CONVEYOR_BENCH_DATA=$DATA"
for round in $(seq "$ROUNDS"); do
  for m in "${MODES[@]}"; do
    ra=true; [ "$m" = _ra0 ] && ra=false
    aff=auto; [ "$m" = _off ] && aff=off
    et=2; [ "$m" = _et1 ] && et=1
    CENV_M="$CENV CONVEYOR_THREAD_AFFINITY=$aff CONVEYOR_JPEG_ENGINE_THREADS=$et"
    measure "py_fused${m}_$round" 100 "$CENV_M CONVEYOR_BENCH_READ_AHEAD=$ra" "role=py" -- "$PYTHON" "$E2E/conveyor_e2e.py" \
      --yaml "$PIPES/train_fused.yaml" --capture on --data "$DATA" --batch 256 --threads 8 --prefetch 2 \
      --iterations 30 --repeats 5
    measure "cli_fused${m}_$round" 100 "$CENV_M $KNOBS CONVEYOR_BENCH_READ_AHEAD=$ra" "role=cli" -- "$CONVEYOR_BIN" bench \
      "$PIPES/train_fused.yaml" --json --warmup 11 --iterations 30 --repeats 5
  done
done
# One file back (the device tool returns a few files per call): every JSON, one per line.
for f in "$RAW"/*.json; do printf '%s\t%s\n' "$(basename "$f" .json)" "$(tr -d '\n' < "$f")"; done > "$OUTDIR/e2e_conveyor.tsv"
tar czf "$OUTDIR/e2e_conveyor_raw.tar.gz" -C "$RAW" .
