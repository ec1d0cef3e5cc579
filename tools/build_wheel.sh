#!/usr/bin/env bash
# Builds dist/conveyor-<version>-py3-none-linux_x86_64.whl: the conveyor package, libconveyor_c.so
# and the Debian shared libraries it needs, found beside it through $ORIGIN, and the video plugin
# (its FFmpeg libraries are the system's; python/build_wheel.py).
#   bash tools/build_wheel.sh && pip install dist/conveyor-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
$BAZEL build //core/capi:libconveyor_c.so //operators/video:libconveyor_video.so
BIN=$($BAZEL info bazel-bin 2>/dev/null)
# The video plugin rides along without FFmpeg (python/build_wheel.py: the system's libraries).
python3 python/build_wheel.py --lib "$BIN/core/capi/libconveyor_c.so" \
  --plugin "$BIN/operators/video/libconveyor_video.so" --out dist
