#!/usr/bin/env bash
# tools/test_summary.py: case counts from JUnit XML, and a Bazel test whose cases passed but whose
# log has a sanitizer report at exit (Bazel failed it) counted as one failure.
set -u
ROOT=${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-conveyor}
T=${TEST_TMPDIR:-$(mktemp -d)}/summary
rm -rf "$T"; mkdir -p "$T/clean/a" "$T/leak/b"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
xml='<testsuites><testsuite name="S"><testcase name="one" status="run"/><testcase name="two" status="notrun"/></testsuite></testsuites>'
echo "$xml" > "$T/clean/a/test.xml"; echo "[  PASSED  ] 1 test." > "$T/clean/a/test.log"
echo "$xml" > "$T/leak/b/test.xml"
printf '[  PASSED  ] 1 test.\n==18423==ERROR: LeakSanitizer: detected memory leaks\n' > "$T/leak/b/test.log"
out=$(python3 "$ROOT/tools/test_summary.py" "$T/clean" 2>&1); rc=$?
[ "$out" = "1 passed, 0 failed, 1 skipped" ] && [ $rc -eq 0 ] || fail "clean: rc $rc, got: $out"
out=$(python3 "$ROOT/tools/test_summary.py" "$T/leak" 2>/dev/null); rc=$?
[ "$out" = "1 passed, 1 failed, 1 skipped" ] && [ $rc -eq 1 ] || fail "leak: rc $rc, got: $out"
err=$(python3 "$ROOT/tools/test_summary.py" "$T/leak" 2>&1 >/dev/null)
case "$err" in *"sanitizer report (==18423==ERROR: LeakSanitizer: detected memory leaks)"*) ;; *) fail "leak: message: $err" ;; esac
[ $failures -eq 0 ] && echo "test_summary: all checks passed"
exit $((failures > 0))
