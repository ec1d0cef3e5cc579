#!/usr/bin/env bash
# The lead's device run for issue 14: on the 2-GPU machine, a 1-process baseline, the 2-process run
# (coverage + scaling table), then 2 processes sharing GPU 0. Needs torch (with gloo) and
# libconveyor_c.so (CONVEYOR_LIB, or next to python/conveyor). NCCL_* settings are left untouched.
#   tests/distributed/run_torchrun_check.sh DATA_DIR [extra torchrun_check.py options]
# SHARDS=1 (issue 36) runs the 2-process coverage check over shards instead: readers.webdataset and
# readers.tfrecord, shuffle: samples (indexed) and shuffle: shards (scanned), local and over HTTP.
set -euo pipefail
DATA=${1:?usage: run_torchrun_check.sh DATA_DIR [options]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp}
TORCHRUN=${TORCHRUN:-torchrun}
if [ "${SHARDS:-0}" = 1 ]; then
  for reader in webdataset tfrecord; do
    for mode in "--shuffle samples" "--shuffle shards --no-index" "--shuffle samples --http" \
                "--shuffle shards --no-index --http"; do
      # shellcheck disable=SC2086  # $mode is several options
      "$TORCHRUN" --standalone --nproc_per_node 2 "$HERE/torchrun_check.py" --data "$DATA" --reader "$reader" \
        $mode --epochs 3 --out "$OUT/torchrun_2_${reader}_$(echo $mode | tr -d ' -').json" "$@"
    done
  done
  exit 0
fi
"$TORCHRUN" --standalone --nproc_per_node 1 "$HERE/torchrun_check.py" --data "$DATA" --out "$OUT/torchrun_1.json" "$@"
"$TORCHRUN" --standalone --nproc_per_node 2 "$HERE/torchrun_check.py" --data "$DATA" \
  --baseline "$OUT/torchrun_1.json" --out "$OUT/torchrun_2.json" "$@"
"$TORCHRUN" --standalone --nproc_per_node 2 "$HERE/torchrun_check.py" --data "$DATA" --share-gpu \
  --out "$OUT/torchrun_2_shared.json" "$@"
