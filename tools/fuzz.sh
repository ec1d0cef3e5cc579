#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/*_fuzz.cc) with ASan + UBSan, two at a time, and prints the
# executions and findings of each.
#
# | usage                      | does                                                                 |
# |----------------------------|----------------------------------------------------------------------|
# | tools/fuzz.sh [SECONDS]    | fuzz each target SECONDS (default 600); new inputs go to a scratch   |
# |                            | corpus, crashes to fuzz/<target>/crash-* (keep them in the corpus    |
# |                            | once fixed)                                                          |
# | tools/fuzz.sh --replay     | run every committed corpus file through its target once (CI runs the |
# |                            | same through Bazel: fuzz/BUILD's <target>_replay tests, ASan+UBSan)   |
#
# Environment: FUZZ_JOBS (parallel targets, default 2), FUZZ_TARGETS (names, default all),
# FUZZ_BUILD_DIR (binaries, default /tmp/conveyor-fuzz), FUZZ_JUNIT (--replay: a JUnit XML file, one
# case per target, for tools/test_summary.py). Exit status non-zero when any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${FUZZ_BUILD_DIR:-/tmp/conveyor-fuzz}
export FUZZ_BUILD_DIR=$OUT
mode=fuzz seconds=600
if [ "${1:-}" = --replay ]; then mode=replay; elif [ -n "${1:-}" ]; then seconds=$1; fi
targets=(${FUZZ_TARGETS:-$(ls fuzz/*_fuzz.cc | xargs -n1 basename | sed 's/_fuzz\.cc$//')})
bash fuzz/build.sh "${targets[@]/%/_fuzz}" >"$OUT.build.log" 2>&1 || { cat "$OUT.build.log"; echo "fuzz: build failed"; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$OUT/logs"

run_one() {  # $1 target; prints "target: ..." summary
  local t=$1 dict=() log="$OUT/logs/$1.log"
  for d in fuzz/"$t"/*.dict; do [ -f "$d" ] && dict=(-dict="$d"); done
  if [ "$mode" = replay ]; then
    "$OUT/${t}_fuzz" fuzz/"$t"/corpus/* >"$log" 2>&1
    local rc=$?
    echo "$t: replayed $(ls fuzz/"$t"/corpus | wc -l) corpus files: $([ $rc = 0 ] && echo clean || echo "FAILED (log $log)")"
    return $rc
  fi
  local scratch="$OUT/corpus/$t" start=$SECONDS
  mkdir -p "$scratch"
  "$OUT/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="fuzz/$t/" "${dict[@]}" "$scratch" fuzz/"$t"/corpus >"$log" 2>&1
  local rc=$?
  local execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  local cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "$t: ${execs:-?} executions in $((SECONDS - start))s, ${cov:-cov: ?}, corpus $(ls "$scratch" | wc -l), findings: $([ $rc = 0 ] && echo 0 || echo "1 (rc $rc, see $log and fuzz/$t/crash-*)")"
  return $rc
}
export -f run_one; export OUT mode seconds
printf '%s\n' "${targets[@]}" | xargs -P"${FUZZ_JOBS:-2}" -I{} bash -c 'run_one {}' | tee "$OUT/summary.txt"
rc=${PIPESTATUS[1]}
if [ "$mode" = replay ] && [ -n "${FUZZ_JUNIT:-}" ]; then
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<testsuites><testsuite name="fuzz_replay">'
    while IFS= read -r line; do
      t=${line%%:*}
      if [[ $line == *": clean" ]]; then echo "<testcase classname=\"fuzz_replay\" name=\"$t\"/>"
      else echo "<testcase classname=\"fuzz_replay\" name=\"$t\"><failure message=\"corpus replay failed\"/></testcase>"; fi
    done <"$OUT/summary.txt"
    echo '</testsuite></testsuites>'
  } >"$FUZZ_JUNIT"
fi
exit "$rc"
