# shellcheck shell=bash
# Sourced by bench/run_all.sh, run_robustness.sh and run_sweeps.sh: where the binaries are, the
# environment of each kind of contender, the data sets, `measure` (one contender, one JSON file), the
# time budget and the time split.
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
# | BENCH_START     | epoch seconds the device call began: the | unset: each script's own start            |
# |                 | budgets count from it (several scripts in|                                           |
# |                 | one call: `export BENCH_START=$(date +%s)`)|                                         |
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

# dataset DIR NAME N: data set NAME of make_test_images (`--dataset NAME --count N`: uniform,
# realistic, varied, varied_progressive, varied_422, varied_444, varied_gray, varied_quality,
# varied_large; bench/README.md) in DIR/0/ (one class: readers want class folders), with the
# generator's DIR/0/MANIFEST.tsv (a header, then one line per file: name, format, width, height,
# subsampling, progressive, quality, bytes) and its summary paragraph kept in DIR/SUMMARY.txt. Kept
# when DIR/0/MANIFEST.tsv lists N files, DIR/0 holds them and DIR/DATASET names this set. Prints the
# summary, copies the manifest to $RAW/manifest_NAME.tsv (RESULTS.md's shares of each set) and the
# generation time to $RAW/timings.txt.
dataset() {
  local dir=$1 name=$2 n=$3
  local manifest=$dir/0/MANIFEST.tsv
  mkdir -p "$RAW"
  if [ -f "$manifest" ] && [ "$(cat "$dir/DATASET" 2>/dev/null)" = "$name $n" ] &&
     [ "$(awk 'NR > 1 && NF' "$manifest" | wc -l)" -eq "$n" ] &&
     [ "$(find "$dir/0" -type f ! -name MANIFEST.tsv | wc -l)" -eq "$n" ]; then
    echo "dataset $name: $dir/0 already holds its $n files"
  else
    rm -rf "$dir"
    mkdir -p "$dir/0"
    local start=$SECONDS
    if ! env ${LIBDIR:+LD_LIBRARY_PATH=$LIBDIR} "$MAKE_IMAGES" "$dir/0" --dataset "$name" --count "$n" > "$dir/SUMMARY.txt" 2>&1; then
      tail -20 "$dir/SUMMARY.txt" >&2
      echo "bench: make_test_images --dataset $name --count $n failed in $dir/0 (does $MAKE_IMAGES know --dataset?)" >&2
      rm -rf "$dir"
      return 1
    fi
    if [ ! -f "$manifest" ]; then
      echo "bench: make_test_images --dataset $name wrote no $manifest" >&2
      rm -rf "$dir"
      return 1
    fi
    echo "$name $n" > "$dir/DATASET"
    echo "dataset $name: $n files in $((SECONDS - start)) s"
    echo "data/$name ($n files): $((SECONDS - start)) s" >> "$RAW/timings.txt"
  fi
  cat "$dir/SUMMARY.txt"
  cp "$manifest" "$RAW/manifest_$name.tsv"
}

# images DIR N WIDTH HEIGHT: N photo-like q90 JPEGs in DIR/0/ (one class; readers want class
# folders). Kept when DIR/0 already holds exactly N of them. (run_sweeps.sh's size axis.)
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

# Seconds spent: since $BENCH_START when set (several scripts in one device call), else since this
# script started.
elapsed() {
  if [ -n "${BENCH_START:-}" ]; then echo $(( $(date +%s) - BENCH_START )); else echo "$SECONDS"; fi
}

# Over the time budget? Then the caller skips the rest and says so in the results.
over_budget() {
  local t
  t=$(elapsed)
  if [ "$t" -gt "${BUDGET_S:-420}" ]; then
    echo "$1: skipped, $t s spent of a ${BUDGET_S:-420} s budget${BENCH_START:+ (counted from BENCH_START)}" |
      tee -a "$RAW/skipped.txt"
    return 0
  fi
  return 1
}

# phase NAME: the seconds since the previous phase (or the script's start) as "NAME: S s" in
# $RAW/timings.txt; RESULTS.md shows the split beside the estimates in the scripts' headers.
PHASE_T=$SECONDS
phase() {
  echo "$1: $((SECONDS - PHASE_T)) s" >> "$RAW/timings.txt"
  PHASE_T=$SECONDS
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
