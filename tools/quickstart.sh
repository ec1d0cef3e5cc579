#!/usr/bin/env bash
# The README's main job, from a fresh clone to a running image pipeline:
#   1. installs the Debian packages the build needs (tools/setup.sh; skips what is present),
#   2. builds the conveyor CLI, the sample-data generator and the example plugin,
#   3. generates the sample dataset at first use (data/: 260 JPEGs in 10 classes, a file list,
#      .npy arrays; tools/make_sample_data, about 5 s),
#   4. runs the training pipeline (pipelines/image_classification_train.yaml) for $EPOCHS epochs
#      (default 5) on the GPU when there is one, else on the CPU, printing the progress and summary,
#   5. writes data/preview.png: one augmented batch beside the decoded images it came from.
# Extra arguments go to `conveyor run` (e.g. --device cpu, --batch-size 32, --set ...).
set -euo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
EPOCHS=${EPOCHS:-5}

bash tools/setup.sh
echo "quickstart: building the conveyor CLI (the first build takes a while)"
$BAZEL build //cli:conveyor //tools/make_sample_data //tests/plugins:libexample_scale.so 2>&1 |
  grep -E "^(ERROR|FAILED)|error:" >&2 || true
bin=$($BAZEL info bazel-bin 2>/dev/null)
[ -x "$bin/cli/conveyor" ] || { echo "quickstart: the build failed (run: $BAZEL build //cli:conveyor)" >&2; exit 1; }

if [ ! -f data/samples/.complete ]; then
  "$bin/tools/make_sample_data/make_sample_data" data
fi

"$bin/cli/conveyor" run pipelines/image_classification_train.yaml --epochs "$EPOCHS" "$@"
"$bin/cli/conveyor" preview pipelines/image_classification_train.yaml --inputs images --samples 8 \
  --tile-size 160 -o data/preview.png
