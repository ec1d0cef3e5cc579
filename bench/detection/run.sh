#!/usr/bin/env bash
# Issue 37's benchmark: Conveyor's SSD training input (pipelines/detection_train.yaml's operators,
# SSD300's 8732 anchors) beside DALI 2.4's equivalent pipeline, on the same COCO-layout folder of
# realistic photographs, in the same run. Writes $OUT/detection/: RESULTS.md, results.json,
# raw.tar.gz (every row's JSON and log, the self-check, the data summary) and run.log.
#
#   on the GPU machine (DALI staged by tools/stage_dali.sh into /root/dali_site, bundle unpacked):
#     tar xJf .gpu_bundle/bundle.tar.xz && PYTHONUNBUFFERED=1 bash .bundle/suite/detection/run.sh
#   here (CPU, tiny, numbers meaningless; DALI's rows run too when DALI_SITE holds a DALI install):
#     bash bench/detection/run.sh --cpu-smoke
#
# Steps, each under a timeout, each failure logged with its reason (a failed step skips what needs
# it, never the results page):
#  1. data: `dataset realistic N` (bench/lib.sh: photographs of varied sizes, qualities,
#     subsamplings, a few progressive/gray/large/PNG files), kept in $WORK/detection/data across
#     calls; a COCO folder $WORK/detection/coco = images/ (a link to it) + annotations.json from
#     make_coco.py (1-12 boxes per image, 80 categories with COCO's ids, 2% without boxes);
#  2. pipelines: make_pipeline.py writes detection_full.yaml (8732 anchors) and the ablation variants;
#  3. self-check: `conveyor run detection_full.yaml` one batch of 32 with --save-outputs, then
#     check_outputs.py (encoded [32, 8732, 4], every matched anchor decodes to a box of its sample);
#  4. rows (bench/e2e/measure.py around each process: GPU memory from NVML, CPU cores, host memory),
#     round 1 then round 2 (--processes 2: a GPU decoder's speed differs between processes):
#       conveyor_cli    `conveyor bench --json` (C++: stage split, GPU issue parts, decoder split)
#       dali_unfused    dali_detection.py --mode unfused (decoders.image + slice: Conveyor's operators)
#       dali_fused      dali_detection.py --mode fused (decoders.image_slice: DALI's fastest)
#     then once: dali_fused_gpuenc (--mode fused --encoder gpu: DALI's box_encoder on the GPU, as
#     Conveyor's runs) and conveyor_loader (conveyor_detection.py --loader: torch tensors, padded boxes);
#  5. when Conveyor's C++ row is below 1.25x DALI's best (or --ablation): `conveyor bench` with
#     CONVEYOR_ISSUE_DETAIL=1 (segments split into setup/prepare/run), without the box encoder, and
#     decode alone, so RESULTS.md shows what limits it;
#  6. results.py → RESULTS.md / results.json.
# Settings, the same for both: batch 256 (bench/'s batch: the issue 13/34 rows and the GPU machine's
# reference figures use it; --batch 128 for an SSD-like per-GPU batch), 8 CPU threads (DALI
# num_threads = Conveyor num_threads), prefetch depth 2 (DALI's prefetch_queue_depth default), GPU
# decoding (DALI mixed with its default hw_decoder_load; Conveyor decoders.image on the GPU,
# balancing engines and CUDA itself), first epoch untimed + 3 warm-up batches, 5 blocks of 30 batches.
#
# | option        | meaning                                                   | default        |
# |---------------|-----------------------------------------------------------|----------------|
# | --budget S    | total seconds, data included: rows not started by then    | 200            |
# |               | are skipped and listed (counted from $BENCH_START if set) |                |
# | --images N    | photographs in the data set                                | 2048           |
# | --batch N     | batch size of every row                                    | 256            |
# | --threads N   | CPU threads of both                                        | 8              |
# | --processes N | rounds of the compared rows                                | 2              |
# | --ablation    | run step 5 whatever the ratio                             | off            |
# | --bundle DIR  | the unpacked bundle                                        | found (lib.sh) |
# | --cpu-smoke   | on the CPU: 64 files, batch 8, 2 threads, 2 x 2 batches    |                |
#
# Time on the H100, estimated (not yet measured): data 2,048 files ~15 s (run_all.sh measured 28 s for
# 4,096 realistic files) + ~1 s of annotations; self-check ~5 s; each row = start-up (Conveyor ~2 s,
# DALI ~5 s, the Loader ~8 s) + an untimed epoch + 41k timed images at 5-15k images/s, ~8-15 s;
# 2 rounds of 3 rows + the Loader row ~80 s; ablation 3 rows ~25 s; results ~1 s. ~130 s in all,
# ~115 s with the data kept from an earlier call on the same machine.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE=$(cd "$HERE/.." && pwd)
BUDGET_S=200; N=2048; BATCH=256; THREADS=8; PROCESSES=2; ABLATION=0; SMOKE=0; BUNDLE_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) BUDGET_S=$2; shift ;;
    --images) N=$2; shift ;;
    --batch) BATCH=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --processes) PROCESSES=$2; shift ;;
    --ablation) ABLATION=1 ;;
    --bundle) BUNDLE_ARG=$2; shift ;;
    --cpu-smoke) SMOKE=1 ;;
    *) echo "detection/run.sh: unknown argument \"$1\" (expected --budget S, --images N, --batch N, --threads N," \
            "--processes N, --ablation, --bundle DIR, --cpu-smoke)" >&2; exit 2 ;;
  esac
  shift
done
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
DWORK=$WORK/detection
RAW=$DWORK/raw          # lib.sh's measure/dataset/phase write here: this run's own, not run_all.sh's
DOUT=$OUTDIR/detection
rm -rf "$RAW"
mkdir -p "$RAW" "$DOUT"
log_to "$DOUT/run.log"

PREFETCH=2; DEVICE=gpu; IT=30; REP=5; WARMUP=3; CHECK_BATCH=32; SMOKE_ARG=(); ROW_TIMEOUT=150
if [ "$SMOKE" = 1 ]; then
  N=64; BATCH=8; THREADS=2; DEVICE=cpu; IT=2; REP=2; WARMUP=1; CHECK_BATCH=4; SMOKE_ARG=(--cpu-smoke)
fi
echo "detection: bundle $BUNDLE, $N files, batch $BATCH, $THREADS threads, $PROCESSES round(s), budget $BUDGET_S s"
machine_facts
CENV=$(conveyor_env); DENV=$(dali_env)
echo "batch: $BATCH; threads: $THREADS; prefetch: $PREFETCH; device: $DEVICE; blocks: $REP x $IT; warmup: first epoch + $WARMUP" \
  > "$RAW/settings.txt"

# 1. Data.
DATA=$DWORK/data; COCO=$DWORK/coco; PIPES=$DWORK/pipes
# dataset is a lib.sh function: a child shell sources lib.sh again so that `timeout` can bound it.
if ! timeout 300 bash -c "source '$SUITE/lib.sh'; RAW='$RAW'; LIBDIR='$LIBDIR'; MAKE_IMAGES='$MAKE_IMAGES'; dataset '$DATA' realistic '$N'"; then
  echo "detection: no data (make_test_images --dataset realistic --count $N failed or ran past 300 s): nothing to measure" |
    tee -a "$RAW/skipped.txt"
  "$PYTHON" "$HERE/results.py" --raw "$RAW" --out "$DOUT"; tar czf "$DOUT/raw.tar.gz" -C "$DWORK" raw; end_log; exit 1
fi
cp "$DATA/SUMMARY.txt" "$RAW/data_summary.txt" 2>/dev/null
mkdir -p "$COCO"
ln -sfn "$DATA/0" "$COCO/images"
if ! timeout 120 "$PYTHON" "$HERE/make_coco.py" "$DATA/0" "$COCO/annotations.json" | tee "$RAW/annotations.txt"; then
  echo "detection: make_coco.py failed: nothing to measure" | tee -a "$RAW/skipped.txt"
  "$PYTHON" "$HERE/results.py" --raw "$RAW" --out "$DOUT"; tar czf "$DOUT/raw.tar.gz" -C "$DWORK" raw; end_log; exit 1
fi
SAMPLES=$("$PYTHON" -c "import sys; sys.path.insert(0, '$HERE'); import det_common; print(det_common.coco_samples('$COCO'))")
EPOCH=$(( (SAMPLES + BATCH - 1) / BATCH ))
warm_cache "$DATA/0"
phase "detection/data ($N files, $SAMPLES with boxes)"

# 2. Pipelines.
if ! timeout 60 "$PYTHON" "$HERE/make_pipeline.py" "$PIPES" > "$RAW/pipelines.txt" 2>&1; then
  cat "$RAW/pipelines.txt"
  echo "detection: make_pipeline.py failed: nothing to measure" | tee -a "$RAW/skipped.txt"
  "$PYTHON" "$HERE/results.py" --raw "$RAW" --out "$DOUT"; tar czf "$DOUT/raw.tar.gz" -C "$DWORK" raw; end_log; exit 1
fi
cat "$RAW/pipelines.txt"
KNOBS="CONVEYOR_BENCH_COCO=$COCO CONVEYOR_BENCH_DEVICE=$DEVICE CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=$BATCH"
KNOBS="$KNOBS CONVEYOR_BENCH_THREADS=$THREADS CONVEYOR_BENCH_PREFETCH=$PREFETCH"

# 3. Self-check: Conveyor's targets have one row per SSD300 anchor and decode back to the boxes.
rm -rf "$DWORK/check"
if env $CENV $KNOBS timeout 120 "$CONVEYOR_BIN" run "$PIPES/detection_full.yaml" --batch-size "$CHECK_BATCH" \
     --iterations 1 --no-progress --save-outputs "$DWORK/check" > "$RAW/self_check.log" 2>&1 &&
   timeout 120 "$PYTHON" "$HERE/check_outputs.py" "$DWORK/check" >> "$RAW/self_check.log" 2>&1; then
  echo "ok" > "$RAW/self_check.status"
else
  echo "failed" > "$RAW/self_check.status"
fi
echo "self-check: $(cat "$RAW/self_check.status")"; tail -3 "$RAW/self_check.log"
phase "detection/self-check"

# 4. The compared rows.
conveyor_cli() {  # NAME YAML EXTRA_ENV TAGS
  measure "$1" "$ROW_TIMEOUT" "$CENV $KNOBS $3" "$4" -- "$CONVEYOR_BIN" bench "$2" --json \
    --warmup $((EPOCH + WARMUP)) --iterations "$IT" --repeats "$REP"
}
dali_row() {  # NAME MODE PROCESS [ENCODER]
  measure "$1" "$ROW_TIMEOUT" "$DENV" "who=dali mode=$2 process=$3 encoder=${4:-cpu}" -- "$DALI_PYTHON" \
    "$HERE/dali_detection.py" --coco "$COCO" --mode "$2" --encoder "${4:-cpu}" --batch "$BATCH" --threads "$THREADS" \
    --prefetch "$PREFETCH" --iterations "$IT" --repeats "$REP" --warmup "$WARMUP" "${SMOKE_ARG[@]}"
}
for p in $(seq 1 "$PROCESSES"); do
  over_budget "round $p: conveyor_cli" || conveyor_cli "conveyor_cli_p$p" "$PIPES/detection_full.yaml" "" \
    "who=conveyor path=cli variant=full process=$p"
  over_budget "round $p: dali_unfused" || dali_row "dali_unfused_p$p" unfused "$p"
  over_budget "round $p: dali_fused" || dali_row "dali_fused_p$p" fused "$p"
  if [ "$p" = 1 ]; then
    over_budget "dali_fused_gpuenc" || dali_row "dali_fused_gpuenc_p1" fused 1 gpu
    LOADER=(--loader); [ "$SMOKE" = 1 ] && LOADER=()  # no torch here: the Pipeline loop checks the script
    over_budget "conveyor_loader" || measure conveyor_loader "$ROW_TIMEOUT" "$CENV" "who=conveyor path=python process=1" -- \
      "$PYTHON" "$HERE/conveyor_detection.py" --yaml "$PIPES/detection_full.yaml" --coco "$COCO" "${LOADER[@]}" \
      --batch "$BATCH" --threads "$THREADS" --prefetch "$PREFETCH" --iterations "$IT" --repeats "$REP" \
      --warmup "$WARMUP" "${SMOKE_ARG[@]}"
  fi
  phase "detection/round $p"
done

# 5. What limits Conveyor, when it is behind the target.
BEHIND=$("$PYTHON" "$HERE/results.py" --raw "$RAW" --behind)
echo "Conveyor C++ / DALI's best: $BEHIND"
if [ "$ABLATION" = 1 ] || [ "$BEHIND" != "ok" ]; then
  over_budget "ablation: detail" || conveyor_cli conveyor_detail "$PIPES/detection_full.yaml" CONVEYOR_ISSUE_DETAIL=1 \
    "who=conveyor path=cli variant=full_detail process=ablation"
  over_budget "ablation: no_encoder" || conveyor_cli conveyor_no_encoder "$PIPES/detection_no_encoder.yaml" "" \
    "who=conveyor path=cli variant=no_encoder process=ablation"
  over_budget "ablation: decode_only" || conveyor_cli conveyor_decode_only "$PIPES/detection_decode_only.yaml" "" \
    "who=conveyor path=cli variant=decode_only process=ablation"
  phase "detection/ablation"
fi

# 6. Results.
cp "$COCO/annotations.json" "$RAW/" 2>/dev/null
echo "detection/total: $(elapsed) s" >> "$RAW/timings.txt"
"$PYTHON" "$HERE/results.py" --raw "$RAW" --out "$DOUT" || echo "detection: results.py failed (raw files in raw.tar.gz)"
tar czf "$DOUT/raw.tar.gz" -C "$DWORK" raw
echo "detection: $(ls "$DOUT" | paste -sd' ' -) in $DOUT, $(elapsed) s"
end_log
