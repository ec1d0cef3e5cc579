#!/usr/bin/env bash
# tools/bundle_run.sh's sanitizer bookkeeping, on stand-ins: every test binary here is a script
# that prints gtest-like lines (and fails where told), compute-sanitizer is a script that runs it
# and prints the summary line and reports it is told to. Checks: --initcheck-shards splits only the
# slow binary and only under initcheck, passes the gtest shard variables, counts the shards as one
# binary that fails when one shard fails; the decoding binaries get CONVEYOR_JPEG_ENGINES=0 under
# initcheck; initcheck reports all inside nvJPEG's kernels with every test passed are not a
# failure, one report elsewhere is; the summary lines and the exit status follow the verdicts.
set -uo pipefail
ROOT=${TEST_SRCDIR:?}/${TEST_WORKSPACE:-conveyor}
T=${TEST_TMPDIR:-$(mktemp -d)}/bundle
rm -rf "$T"; mkdir -p "$T/tests" "$T/bin"
cp "$ROOT/tools/bundle_run.sh" "$T/run.sh"
cp "$ROOT/tools/test_summary.py" "$T/test_summary.py"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A stand-in test binary: prints its shard and engines setting; FAIL_SHARD=i fails shard i.
add_binary() {  # name [body]
  local dir="$T/tests/$1.runfiles/conveyor/t"
  mkdir -p "$dir"
  cat >"$dir/bin" <<'BIN'
#!/usr/bin/env bash
echo "[==========] Running 1 test from 1 test suite."
echo "shard=${GTEST_SHARD_INDEX:-none}/${GTEST_TOTAL_SHARDS:-none} engines=${CONVEYOR_JPEG_ENGINES:-unset}"
if [ -n "${FAIL_SHARD:-}" ] && [ "${GTEST_SHARD_INDEX:-}" = "$FAIL_SHARD" ]; then
  echo "[  FAILED  ] S.T (1 ms)"; exit 1
fi
echo "[  PASSED  ] 1 test."
BIN
  chmod +x "$dir/bin"
  echo "$1 conveyor/t/bin" >>"$T/tests/index"
}
SLOW=tests__operators__decoders__gpu__gpu_decoder_gpu_test
ROI=tests__operators__decoders__gpu__gpu_decoder_roi_gpu_test
PLAIN=tests__core__memory__memory_test
add_binary "$SLOW"; add_binary "$ROI"; add_binary "$PLAIN"

# The stand-in sanitizer: REPORTS="kernel kernel ..." prints one initcheck report per word
# (the word is the first frame), then the summary; exits 99 when there were reports, else the
# binary's code.
cat >"$T/bin/compute-sanitizer" <<'SAN'
#!/usr/bin/env bash
tool=
while [[ $1 == --* ]]; do
  [ "$1" = --tool ] && tool=$2
  case $1 in --tool|--error-exitcode|--leak-check|--check-api-memory-access|--print-limit) shift 2 ;; *) shift ;; esac
done
echo "========= COMPUTE-SANITIZER"
"$@"; rc=$?
n=0
if [ "$tool" = initcheck ]; then
  for k in ${REPORTS:-}; do
    echo "========= Uninitialized __global__ memory read of size 4 bytes"
    echo "=========     at void $k(int)+0x220"
    n=$((n + 1))
  done
fi
echo "========= ERROR SUMMARY: $n errors"
[ $n -gt 0 ] && exit 99
exit $rc
SAN
chmod +x "$T/bin/compute-sanitizer"

run() {  # out-dir args...; prints the runner's output, returns its status
  local out=$1; shift
  (cd "$T" && PATH="$T/bin:$PATH" OUT="$T/$out" bash run.sh --sanitize-only "$@" 2>&1)
}

# 1. Four shards for the slow binary under initcheck, none under memcheck, none for the others.
out=$(run o1 --tools initcheck,memcheck --initcheck-shards 4 --jobs 3); st=$?
[ $st -eq 0 ] || fail "clean run exited $st: $out"
for i in 0 1 2 3; do
  log="$T/o1/$SLOW.s$i.initcheck.log"
  grep -q "shard=$i/4 engines=0" "$log" 2>/dev/null || fail "shard $i: $(cat "$log" 2>/dev/null)"
done
[ -e "$T/o1/$SLOW.s4.initcheck.log" ] && fail "a fifth shard"
[ -e "$T/o1/$SLOW.initcheck.log" ] && fail "the slow binary also ran unsharded"
grep -q "shard=none/none engines=unset" "$T/o1/$SLOW.memcheck.log" || fail "memcheck sharded or engines off"
grep -q "shard=none/none engines=0" "$T/o1/$ROI.initcheck.log" || fail "roi binary: $(cat "$T/o1/$ROI.initcheck.log")"
grep -q "shard=none/none engines=unset" "$T/o1/$PLAIN.initcheck.log" || fail "non-decoding binary got engines off"
echo "$out" | grep -qx "sanitize initcheck: 3 binaries, 3 clean, 0 with errors" || fail "initcheck summary: $out"
echo "$out" | grep -qx "sanitize memcheck: 3 binaries, 3 clean, 0 with errors" || fail "memcheck summary: $out"

# 2. Without --initcheck-shards, one process.
run o2 --tools initcheck >/dev/null
[ -e "$T/o2/$SLOW.initcheck.log" ] || fail "unsharded log missing"
ls "$T/o2" | grep -q '\.s[0-9]*\.initcheck' && fail "sharded without --initcheck-shards"

# 3. One failing shard fails the binary, once, and the run.
out=$(FAIL_SHARD=2 run o3 --tools initcheck --initcheck-shards 4 --jobs 4); st=$?
[ $st -ne 0 ] || fail "a failed shard left the run's status 0"
echo "$out" | grep -qx "sanitize initcheck: 3 binaries, 2 clean, 1 with errors ($SLOW)" || fail "failed shard summary: $out"
grep -q "^1 " "$T/o3/$SLOW.s2.initcheck.result" || fail "shard 2 verdict: $(cat "$T/o3/$SLOW.s2.initcheck.result")"

# 4. initcheck reports all inside nvJPEG, tests passed: clean, said so; one elsewhere: failing.
out=$(REPORTS="nvjpeg::ycbcr_to_format_kernel_roi<uchar> nvjpeg::dctQuantInvJpegKernelMultiChannel<ushort2>" \
  run o4 --tools initcheck --only "$ROI"); st=$?
[ $st -eq 0 ] || fail "nvJPEG-only reports failed the run: $out"
echo "$out" | grep -q "0 errors in our code; 2 reports inside nvJPEG's kernels" || fail "nvJPEG verdict: $out"
out=$(REPORTS="nvjpeg::ycbcr_to_format_kernel_roi<uchar> conveyor::ops::ResizeKernel" \
  run o5 --tools initcheck --only "$ROI"); st=$?
[ $st -ne 0 ] || fail "a report in our kernel passed"
echo "$out" | grep -qx "sanitize initcheck: 1 binaries, 0 clean, 1 with errors ($ROI)" || fail "our-kernel summary: $out"
# ... and nvJPEG-only reports with a failed test still fail.
out=$(FAIL_SHARD=0 REPORTS="nvjpeg::ycbcr_to_format_kernel_roi<uchar>" \
  run o6 --tools initcheck --only "$SLOW" --initcheck-shards 2); st=$?
[ $st -ne 0 ] || fail "nvJPEG-only reports with a failed test passed: $out"

[ $failures -eq 0 ] && echo "bundle_run_test: all checks passed"
exit $((failures > 0))
