#!/usr/bin/env bash
# Runs the whole test suite (C++ through Bazel; the Python bridge's pytest suite where pytest is
# available) and ends with `N passed, M failed, K skipped`. GPU tests skip, with reasons, without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
status=0
$BAZEL test //... "$@" || status=$?
# Bazel exits 4 when no tests ran; 3 when some failed; anything else is a build failure.
xml_dirs=("$($BAZEL info bazel-testlogs 2>/dev/null)")
if [ -d tests/python ] && /usr/bin/python3 -c "import pytest" 2>/dev/null; then
  lib=$($BAZEL info bazel-bin 2>/dev/null)/core/capi/libconveyor_c.so
  mkdir -p .test-out
  CONVEYOR_LIB="$lib" PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest -q tests/python \
      --junitxml=.test-out/python.xml -p no:cacheprovider || status=1
  xml_dirs+=(.test-out/python.xml)
fi
python3 tools/test_summary.py "${xml_dirs[@]}" || status=1
exit $status
