# shellcheck shell=bash
# Sourced by bench/run_all.sh and bench/run_sweeps.sh: where the binaries are, the environment of
# each kind of contender, the data set, and `measure` (one contender, one JSON file).
#
# | variable        | meaning                                  | default                                   |
# |-----------------|------------------------------------------|-------------------------------------------|
# | BUNDLE          | unpacked GPU bundle (tools/gpu_bundle.sh)| --bundle, else the suite's parent when it |
# |                 |                                          | is .bundle/suite, else <repo>/.bundle,    |
# |                 |                                          | else <repo>/bazel-bin (a development tree)|
# | WORK            | data and raw results                     | $CONVEYOR_BENCH_WORK or /tmp/conveyor_bench|
# | OUTDIR          | what comes back: RESULTS.md, results.json, raw.tar.gz, the log | $OUT, else $WORK/out |
# | DALI_SITE       | DALI's pip --target folder (stage_dali.sh)| /root/dali_site                          |
# | PYTHON, DALI_PYTHON | interpreters (torch's; DALI's)       | python3, $PYTHON                          |
# | SMOKE           | 1: tiny CPU run (this machine, no GPU)   | 0                                         |
SUITE=${SUITE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
PYTHON=${PYTHON:-python3}
DALI_PYTHON=${DALI_PYTHON:-$PYTHON}
DALI_SITE=${DALI_SITE:-/root/dali_site}
WORK=${CONVEYOR_BENCH_WORK:-/tmp/conveyor_bench}
OUTDIR=${OUT:-$WORK/out}
SMOKE=${SMOKE:-0}
RAW=$WORK/raw
E2E=$SUITE/e2e
PIPES=$SUITE/pipelines

find_bundle() {  # sets CONVEYOR_BIN MAKE_IMAGES LIBCONVEYOR PYPKG BENCHBIN LIBDIR
  local b=${1:-}
  if [ -z "$b" ]; then
    if [ -x "$SUITE/../conveyor" ] && [ -d "$SUITE/../lib" ]; then b=$SUITE/..
    elif [ -x "$SUITE/../.bundle/conveyor" ]; then b=$SUITE/../.bundle
    fi
  fi
  if [ -n "$b" ]; then
    b=$(cd "$b" && pwd)
    CONVEYOR_BIN=$b/conveyor; MAKE_IMAGES=$b/make_test_images; LIBCONVEYOR=$b/libconveyor_c.so
    PYPKG=$b/python; BENCHBIN=$b/bench; LIBDIR=$b/lib
  else
    local bin=$SUITE/../bazel-bin
    [ -x "$bin/cli/conveyor" ] || { echo "bench: no bundle (.bundle/ from tools/gpu_bundle.sh) and no bazel-bin/cli/conveyor" >&2; return 1; }
    bin=$(cd "$bin" && pwd)
    b=$bin
    CONVEYOR_BIN=$bin/cli/conveyor; MAKE_IMAGES=$bin/tools/make_test_images
    LIBCONVEYOR=$bin/core/capi/libconveyor_c.so; PYPKG=$(cd "$SUITE/../python" && pwd)
    BENCHBIN=$bin/tests/benchmarks; LIBDIR=""
  fi
  BUNDLE=$b
  for f in "$CONVEYOR_BIN" "$MAKE_IMAGES" "$LIBCONVEYOR"; do
    [ -e "$f" ] || { echo "bench: expected $f in $BUNDLE, it is missing" >&2; return 1; }
  done
}

# Environment (K=V words for measure.py --env) of each kind of contender. Conveyor's processes get
# the bundle's libraries; DALI's and torch's get nothing of ours, so neither loads our libjpeg,
# libpng or zlib instead of its own.
conveyor_env() {
  local ld="${LIBDIR:+$LIBDIR:}$(dirname "$LIBCONVEYOR")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$ld CONVEYOR_LIB=$LIBCONVEYOR PYTHONPATH=$PYPKG${PYTHONPATH:+:$PYTHONPATH}"
}
dali_env() { echo "PYTHONPATH=$DALI_SITE"; }  # only DALI's folder: the interpreter's own packages do the rest

# images DIR N WIDTH HEIGHT: N photo-like q90 JPEGs in DIR/0/ (one class; readers want class
# folders). Kept when DIR/0 already holds exactly N of them.
images() {
  local dir=$1 n=$2 w=$3 h=$4
  if [ -d "$dir/0" ] && [ "$(find "$dir/0" -name 'photo_*.jpg' | wc -l)" -eq "$n" ]; then
    echo "images: $dir/0 already holds $n"; return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir/0"  # make_test_images creates one level only
  local start=$SECONDS
  env ${LIBDIR:+LD_LIBRARY_PATH=$LIBDIR} "$MAKE_IMAGES" "$dir/0" --photos "$n" --width "$w" --height "$h" --quality 90 ||
    { echo "bench: make_test_images failed for $dir" >&2; return 1; }
  echo "images: $n of ${w}x${h} in $((SECONDS - start)) s"
}

# log_to FILE: everything from here on also goes to FILE; end_log waits for the last line to land.
log_to() { exec > >(tee "$1") 2>&1; LOG_PID=$!; }
end_log() { exec 1>&- 2>&-; wait "${LOG_PID:-}" 2>/dev/null || true; }

warm_cache() { find "$1" -type f -exec cat {} + > /dev/null; }

# measure NAME TIMEOUT "ENV WORDS" "TAG WORDS" -- COMMAND...: runs COMMAND under e2e/measure.py,
# result in $RAW/NAME.json, stderr in $RAW/NAME.log, one status line on stdout.
measure() {
  local name=$1 timeout=$2 envs=$3 tags=$4
  shift 4
  [ "$1" = "--" ] && shift
  local args=() kv
  for kv in $envs; do args+=(--env "$kv"); done
  for kv in $tags; do args+=(--tag "$kv"); done
  PYTHONUNBUFFERED=1 "$PYTHON" "$E2E/measure.py" --out "$RAW/$name.json" --label "$name" --timeout "$timeout" \
    "${args[@]}" -- "$@"
}

# gbench NAME BINARY [ARGS...]: a Google Benchmark binary of the bundle, JSON into $RAW/gb_NAME.json.
gbench() {
  local name=$1 bin=$2
  shift 2
  if [ ! -x "$bin" ]; then echo "$name: skipped ($bin not built)"; return 0; fi
  local start=$SECONDS
  env ${LIBDIR:+LD_LIBRARY_PATH=$LIBDIR} timeout 240 "$bin" --benchmark_out="$RAW/gb_$name.json" \
    --benchmark_out_format=json "$@" > "$RAW/gb_$name.log" 2>&1
  echo "$name: rc $? in $((SECONDS - start)) s ($(grep -c '"name"' "$RAW/gb_$name.json" 2>/dev/null || echo 0) results)"
}

# Over the time budget? Then the caller skips the rest and says so in the results.
over_budget() {
  if [ "$SECONDS" -gt "${BUDGET_S:-420}" ]; then
    echo "$1: skipped, ${SECONDS} s spent of a ${BUDGET_S:-420} s budget" | tee -a "$RAW/skipped.txt"
    return 0
  fi
  return 1
}

# Facts about the machine for make_results.py (key: value lines).
machine_facts() {
  {
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,pcie.link.gen.max --format=csv,noheader 2>/dev/null |
      head -1 | sed 's/^/gpu: /'
    nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1 | sed 's/CUDA Version: /cuda_driver_api: /'
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
    echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel: $(uname -r)"
    echo "python: $("$PYTHON" --version 2>&1)"
    [ -f "$BUNDLE/commit" ] && echo "conveyor_commit: $(cat "$BUNDLE/commit")"
    git -C "$SUITE" rev-parse --short HEAD 2>/dev/null | sed 's/^/suite_commit: /'
    echo "bundle: $BUNDLE"
  } > "$RAW/machine.txt"
  cat "$RAW/machine.txt"
}

# Packs what comes back (at most 8 files): the results, the raw JSON and logs, the run's log.
pack() {
  mkdir -p "$OUTDIR"
  "$PYTHON" "$SUITE/make_results.py" --raw "$RAW" --out "$OUTDIR" "$@" || echo "bench: make_results.py failed" >&2
  tar czf "$OUTDIR/raw.tar.gz" -C "$WORK" raw
  echo "bench: $(ls "$OUTDIR" | paste -sd' ' -) in $OUTDIR"
}
