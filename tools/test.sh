#!/usr/bin/env bash
# Runs the whole test suite (C++ through Bazel; the Python bridge's pytest suite where pytest is
# available) and ends with `N passed, M failed, K skipped`. GPU tests skip, with reasons, without a GPU.
# Arguments go to `bazel test`: `tools/test.sh --config=asan` runs it all under ASan+UBSan (CI does),
# the Python suite then with the sanitizer runtimes preloaded into the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
status=0
configs=()
for a in "$@"; do case $a in --config=*) configs+=("$a") ;; esac; done
logs=$($BAZEL info "${configs[@]}" bazel-testlogs 2>/dev/null)
rm -rf "$logs"  # count only this run's results
$BAZEL test //... "$@" || status=$?
# Bazel exits 3 when some tests failed; any other non-zero code means they could not all run.
extra=()
if [ $status -ne 0 ] && [ $status -ne 3 ]; then
  echo "tools/test.sh: bazel test exited $status (build failure?): counted as one failed case" >&2
  extra=(--extra-failed 1)
fi
mkdir -p .test-out && echo "${extra[1]:-0}" >.test-out/build_failures  # read by .ci/run's summary
xml_dirs=("$logs")
if [ -d tests/python ] && /usr/bin/python3 -c "import pytest" 2>/dev/null; then
  lib=$($BAZEL info "${configs[@]}" bazel-bin 2>/dev/null)/core/capi/libconveyor_c.so
  mkdir -p .test-out
  sanitizer=()
  if [[ " ${configs[*]} " == *" --config=asan "* ]]; then
    # The interpreter is not instrumented: ASan's runtime must load first; its leak check would
    # report the interpreter's own allocations.
    sanitizer=(LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
               ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
  fi
  env "${sanitizer[@]}" CONVEYOR_LIB="$lib" PYTHONPATH="$PWD/python" /usr/bin/python3 -m pytest -q tests/python \
      --junitxml=.test-out/python.xml -p no:cacheprovider || status=1
  xml_dirs+=(.test-out/python.xml)
fi
python3 tools/test_summary.py "${extra[@]}" "${xml_dirs[@]}" || status=1
exit $status
