#!/usr/bin/env bash
# Runs the bundled tests (and optionally benchmarks, the Python suite, compute-sanitizer) on a GPU
# machine. Prints a per-binary summary and the line `N passed, M failed, K skipped`.
#   run.sh [--sanitize] [--tools memcheck,racecheck,synccheck,initcheck] [--sanitize-timeout S]
#          [--sanitize-only] [--gpu-only] [--jobs N] [--initcheck-shards N] [--bench] [--python]
#          [--only REGEX]
# --sanitize runs every test binary again under each compute-sanitizer tool (all four by default;
# --tools picks some), S seconds at most per binary and tool (300). Logs: $OUT/<test>.<tool>.log,
# also packed into $OUT/sanitize-logs.tar.gz (the device returns only a few files); one summary
# line per tool. A binary that makes no CUDA call counts as clean. Four tools over every binary
# take longer than one device call allows: split by --only and --tools. --sanitize-only skips the
# plain run of each binary; --gpu-only takes only the binaries with GPU tests (tests/gpu_index);
# --jobs N runs up to N sanitizer processes at once (the four-tool sweep fits one call with ~8).
# --initcheck-shards N splits the binaries that are too slow under initcheck for one process
# (SLOW_INITCHECK below) into N gtest shards, each its own sanitizer job (logs and verdicts
# <test>.s<i>.initcheck.*); the binary is clean when every shard is.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${OUT:-$HERE/out}
mkdir -p "$OUTDIR/xml"
rm -f "$OUTDIR"/*.result  # sanitizer verdicts of an earlier run in the same folder would be counted again
export LD_LIBRARY_PATH="$HERE/lib:$HERE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SANITIZE=0; BENCH=0; PYTHON=0; ONLY=.; TOOLS=memcheck,racecheck,synccheck,initcheck; STIMEOUT=300
SAN_ONLY=0; GPU_ONLY=0; JOBS=1; SHARDS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) SANITIZE=1 ;;
    --sanitize-only) SANITIZE=1; SAN_ONLY=1 ;;
    --gpu-only) GPU_ONLY=1 ;;
    --bench) BENCH=1 ;;
    --python) PYTHON=1 ;;
    --only) ONLY=$2; shift ;;
    --tools) TOOLS=$2; shift ;;
    --sanitize-timeout) STIMEOUT=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --initcheck-shards) SHARDS=$2; shift ;;
  esac
  shift
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

# The test binaries that decode JPEGs on the GPU (see san_one's initcheck note).
DECODING_BINS='decoders__gpu__|pipelines_gpu_test|checkpoint_gpu_test|soak_test'
# Binaries too slow under initcheck for one process (H100, 2026-11-25: one MatchesLibjpegTurbo
# case of gpu_decoder_gpu_test took 343 s alone, more than 2,000 reports inside nvJPEG's ROI
# colour conversion; its 12 cases ~70 minutes): --initcheck-shards runs them in gtest shards.
SLOW_INITCHECK='decoders__gpu__gpu_decoder_gpu_test$'

# One binary under one compute-sanitizer tool; the verdict goes to $OUTDIR/<name>.<tool>.result
# ("rc summary"), read back after every job has finished.
# A 4th and 5th argument (shard index, shard count) run one gtest shard, as <name>.s<i>.<tool>.
san_one() {
  local name=$1 path=$2 tool=$3 dir="$HERE/tests/$1.runfiles" extra=() tag=$1
  local shard_env=()
  if [ $# -ge 5 ]; then
    shard_env=(GTEST_SHARD_INDEX="$4" GTEST_TOTAL_SHARDS="$5")
    tag="$name.s$4"
  fi
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  # initcheck and nvJPEG (H100, 2026-11-25). What the JPEG hardware engines write is invisible to
  # initcheck (not a kernel, not a CUDA copy), so every later read of an image they decoded, by
  # nvJPEG's colour conversion and by our kernels after the decoder (resize, flip, copy), is
  # reported: tens of thousands per binary, also with every nvJPEG allocation zero-filled. And
  # nvJPEG's CUDA backend copies its own pitched buffers with their padding (cuMemcpy2DAsync inside
  # nvjpegDecodeJpegDevice), reported as copies of uninitialized bytes. Neither is our code. So,
  # under initcheck, the binaries that decode on the GPU (DECODING_BINS) run with the engines off
  # (CONVEYOR_JPEG_ENGINES=0: the CUDA backend's kernels write every decoded byte, and initcheck
  # sees those writes, so our kernels after them stay checked) and the CUDA API's memory-access
  # checks off (copies stay checked in every other binary). nvJPEG's kernels stay instrumented:
  # leaving them out (--kernel-name-exclude) hides their writes too, and every decoded image read
  # by our kernels was reported. INITCHECK_NVJPEG=1 runs these binaries as usual.
  local env_extra=()
  if [ "$tool" = initcheck ] && [ "${INITCHECK_NVJPEG:-0}" != 1 ] && [[ $name =~ $DECODING_BINS ]]; then
    extra=(--check-api-memory-access no --print-limit 2000)
    env_extra=(CONVEYOR_JPEG_ENGINES=0)
  fi
  local slog="$OUTDIR/$tag.$tool.log"
  (cd "$dir/conveyor" && env "${env_extra[@]}" "${shard_env[@]}" TEST_SRCDIR="$dir" TEST_WORKSPACE=conveyor CONVEYOR_UNDER_SANITIZER=1 \
      timeout "$STIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 99 "${extra[@]}" "$dir/$path" \
      </dev/null >"$slog" 2>&1)
  local src=$?
  # A binary that never calls CUDA (pure parsing tests) gives the sanitizer nothing to check.
  grep -q "terminated before first instrumented API call" "$slog" && src=0
  local summary
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|terminated before' "$slog" | sed 's/^=* *//' | paste -sd';' -)
  [ $src -eq 124 ] && summary="timed out after ${STIMEOUT}s; $summary"
  # initcheck reports inside nvJPEG's own kernels (first frame nvjpeg::..., e.g. its ROI colour
  # conversion reading chroma beyond the decoded window, H100 2026-11-25) are the library's: not a
  # failure when every error was printed, each is one of them, and every test passed. Ours stay
  # fatal: one report in any other kernel, or a failed test, keeps the binary failing.
  if [ "$tool" = initcheck ] && [ $src -eq 99 ]; then
    local total printed in_nvjpeg
    total=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$slog" | head -1)
    # Not anchored: a report can start in the middle of a line the test printed.
    printed=$(grep -oE '========= (Uninitialized|Host API memory access error)' "$slog" | wc -l)
    in_nvjpeg=$(grep -A1 -E '========= Uninitialized __global__' "$slog" | grep -cE '^=========     at .*nvjpeg::')
    if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" -eq "$printed" ] && [ "$in_nvjpeg" -eq "$total" ] &&
        ! grep -q '^\[  FAILED  \]' "$slog" && grep -q '^\[  PASSED  \]' "$slog"; then
      src=0
      summary="0 errors in our code; $total reports inside nvJPEG's kernels (nvjpeg::), not ours"
    fi
  fi
  echo "$src $summary" >"$OUTDIR/$tag.$tool.result"
  echo "$tool $tag: rc $src $summary"
}

status=0
declare -A SAN_RUN=() SAN_BAD=() SAN_SEEN=()  # per tool: binaries run, binaries with errors
while read -r name path; do
  echo "$name" | grep -Eq "$ONLY" || continue
  if [ "$GPU_ONLY" = 1 ] && ! grep -qx "$name" "$HERE/tests/gpu_index" 2>/dev/null; then continue; fi
  dir="$HERE/tests/$name.runfiles"
  log="$OUTDIR/$name.log"
  if [ "$SAN_ONLY" = 0 ]; then
    (cd "$dir/conveyor" && TEST_SRCDIR="$dir" TEST_WORKSPACE=conveyor timeout 300 \
        "$dir/$path" --gtest_output="xml:$OUTDIR/xml/$name.xml" >"$log" 2>&1)
    rc=$?
    [ $rc -ne 0 ] && { status=1; echo "FAILED: $name (rc $rc)"; grep -E "Failure|error|\[  FAILED" "$log" | head -20; }
  fi
  if [ "$SANITIZE" = 1 ] && command -v compute-sanitizer >/dev/null; then
    for tool in ${TOOLS//,/ }; do
      # At most JOBS sanitizer processes at once (they are mostly CPU-bound; the GPU is shared).
      if [ "$tool" = initcheck ] && [ "$SHARDS" -gt 1 ] && [[ $name =~ $SLOW_INITCHECK ]]; then
        for ((i = 0; i < SHARDS; i++)); do
          while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
          san_one "$name" "$path" "$tool" "$i" "$SHARDS" &
        done
        continue
      fi
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
      san_one "$name" "$path" "$tool" &
    done
  fi
done < "$HERE/tests/index"

if [ "$SANITIZE" = 1 ]; then
  if ! command -v compute-sanitizer >/dev/null; then
    echo "sanitize: compute-sanitizer not found"; status=1
  else
    wait
    for f in "$OUTDIR"/*.result; do
      [ -f "$f" ] || continue
      base=$(basename "$f" .result); tool=${base##*.}; name=${base%.*}
      name=$(echo "$name" | sed -E 's/\.s[0-9]+$//')  # the shards of one binary count as the binary
      if [ -z "${SAN_SEEN[$tool.$name]:-}" ]; then
        SAN_SEEN[$tool.$name]=ok
        SAN_RUN[$tool]=$(( ${SAN_RUN[$tool]:-0} + 1 ))
      fi
      if [ "$(cut -d' ' -f1 "$f")" != 0 ] && [ "${SAN_SEEN[$tool.$name]}" = ok ]; then
        status=1; SAN_SEEN[$tool.$name]=bad; SAN_BAD[$tool]="${SAN_BAD[$tool]:-} $name"
      fi
    done
    for tool in ${TOOLS//,/ }; do
      bad=(${SAN_BAD[$tool]:-})
      echo "sanitize $tool: ${SAN_RUN[$tool]:-0} binaries, $(( ${SAN_RUN[$tool]:-0} - ${#bad[@]} )) clean, ${#bad[@]} with errors${bad:+ (${bad[*]})}"
    done
    (cd "$OUTDIR" && ls ./*.memcheck.log ./*.racecheck.log ./*.synccheck.log ./*.initcheck.log 2>/dev/null |
      tar czf sanitize-logs.tar.gz -T -)
  fi
fi

if [ "$PYTHON" = 1 ] && [ -d "$HERE/python_tests" ]; then
  CONVEYOR_LIB="$HERE/libconveyor_c.so" PYTHONPATH="$HERE/python${PYTHONPATH:+:$PYTHONPATH}" \
    python3 -m pytest -q "$HERE/python_tests" --junitxml="$OUTDIR/xml/python.xml" >"$OUTDIR/python.log" 2>&1 || status=1
  tail -5 "$OUTDIR/python.log"
fi

if [ "$BENCH" = 1 ]; then
  for b in "$HERE"/bench/*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" --benchmark_min_time=0.2 --benchmark_out="$OUTDIR/$(basename "$b").json" \
        --benchmark_out_format=json 2>&1 | tee "$OUTDIR/$(basename "$b").log" | grep -vE '^\s*$' | tail -40
  done
fi

# --sanitize-only runs no plain test: its verdict is the sanitizer lines above, not "0 passed".
if [ "$SAN_ONLY" = 0 ] || [ "$PYTHON" = 1 ]; then
  python3 "$HERE/test_summary.py" --per-file "$OUTDIR/xml" || status=1
fi
exit $status
