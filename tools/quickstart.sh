#!/usr/bin/env bash
# The README's main job, from a fresh clone to a running image pipeline:
#   1. installs the Debian packages the build needs (tools/setup.sh; skips what is present),
#   2. builds the conveyor CLI, the sample-data generator and the example plugin,
#   3. generates the sample dataset at first use (data/: 260 JPEGs in 10 classes, a file list,
#      .npy arrays, the JPEGs again as TFRecord files and as tar shards, COCO scenes, small video
#      clips; tools/make_sample_data, about 5 s; again when an older generator's set lacks a part),
#   4. runs the training pipeline (pipelines/image_classification_train.yaml) for $EPOCHS epochs
#      (default 5) on the GPU when there is one, else on the CPU, printing the progress and summary,
#   5. writes data/preview.png: one augmented batch beside the decoded images it came from.
# Extra arguments go to `conveyor run` (e.g. --device cpu, --batch-size 32, --iterations 10, --set ...).
set -euo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
EPOCHS=${EPOCHS:-5}

bash tools/setup.sh
echo "quickstart: building the conveyor CLI (the first build takes a while)"
# INFO lines hidden; progress (on a terminal) and errors shown; set -e stops on a failed build.
quiet=(--ui_event_filters=-info)
[ -t 1 ] || quiet+=(--noshow_progress)
$BAZEL build "${quiet[@]}" //cli:conveyor //tools/make_sample_data //tests/plugins:libexample_scale.so
bin=$($BAZEL info bazel-bin 2>/dev/null)

if [ ! -f data/samples/.complete ] || [ ! -f data/webdataset/train-00003-of-00004.tar.idx ] || [ ! -f data/coco/annotations.json ] \
   || [ ! -f data/videos/class_2/clip_1.mp4 ]; then
  "$bin/tools/make_sample_data/make_sample_data" data
fi

# --iterations/--epochs replace the default length; the preview takes the arguments that are not
# run-only (--device, --batch-size, --set, --feed), so both see the same pipeline.
length=(--epochs "$EPOCHS")
preview_args=()
skip=0
for arg in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$arg" in
    --iterations|--epochs) length=(); skip=1 ;;
    --iterations=*|--epochs=*) length=() ;;
    --save-outputs|--progress-interval) skip=1 ;;
    --save-outputs=*|--progress-interval=*|--no-progress) ;;
    *) preview_args+=("$arg") ;;
  esac
done
"$bin/cli/conveyor" run pipelines/image_classification_train.yaml "${length[@]}" "$@"
"$bin/cli/conveyor" preview pipelines/image_classification_train.yaml "${preview_args[@]}" --inputs images \
  --samples 8 --tile-size 160 -o data/preview.png
