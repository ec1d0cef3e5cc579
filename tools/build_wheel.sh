#!/usr/bin/env bash
# Builds dist/conveyor-<version>-py3-none-linux_x86_64.whl: the conveyor package, libconveyor_c.so
# and the Debian shared libraries it needs, found beside it through $ORIGIN (python/build_wheel.py).
#   bash tools/build_wheel.sh && pip install dist/conveyor-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
$BAZEL build //core/capi:libconveyor_c.so
python3 python/build_wheel.py --lib "$($BAZEL info bazel-bin 2>/dev/null)/core/capi/libconveyor_c.so" --out dist
