#!/usr/bin/env bash
# The lead's device run for issue 14: on the 2-GPU machine, a 1-process baseline, the 2-process run
# (coverage + scaling table), then 2 processes sharing GPU 0. Needs torch (with gloo) and
# libconveyor_c.so (CONVEYOR_LIB, or next to python/conveyor). NCCL_* settings are left untouched.
#   tests/distributed/run_torchrun_check.sh DATA_DIR [extra torchrun_check.py options]
set -euo pipefail
DATA=${1:?usage: run_torchrun_check.sh DATA_DIR [options]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp}
TORCHRUN=${TORCHRUN:-torchrun}
"$TORCHRUN" --standalone --nproc_per_node 1 "$HERE/torchrun_check.py" --data "$DATA" --out "$OUT/torchrun_1.json" "$@"
"$TORCHRUN" --standalone --nproc_per_node 2 "$HERE/torchrun_check.py" --data "$DATA" \
  --baseline "$OUT/torchrun_1.json" --out "$OUT/torchrun_2.json" "$@"
"$TORCHRUN" --standalone --nproc_per_node 2 "$HERE/torchrun_check.py" --data "$DATA" --share-gpu \
  --out "$OUT/torchrun_2_shared.json" "$@"
