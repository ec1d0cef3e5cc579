#!/usr/bin/env bash
# An A/B of Conveyor settings with DALI in the same call, interleaved: process after process of the
# fused training pipeline on one data set, each round running every row once (so the machine's
# drift between device calls — ±10% on the H200 — stays out of the comparison), then per row the
# median over rounds and its ratio to DALI's. Runs on the GPU machine with the bundle unpacked and
# DALI staged (tools/stage_dali.sh), after run_all.sh's settings (batch 256, 8 threads, prefetch 2).
#
#   AB_ROWS="off:py:CONVEYOR_BENCH_CPU_STAGE_THREAD=false auto:py dali:dali" bash bench/ab_beside_dali.sh [--bundle DIR]
#
# | variable  | meaning                                                               | default     |
# |-----------|-----------------------------------------------------------------------|-------------|
# | AB_ROWS   | NAME:KIND[:ENV=V,...] each; KIND py (conveyor.torch.Loader), cli       | see above   |
# |           | (`conveyor bench`) or dali                                            |             |
# | AB_ROUNDS | rounds (processes per row)                                            | 3           |
# | AB_SET    | data set (bench/lib.sh's `dataset` names), AB_FILES its files         | realistic, 4096 |
# Into $OUT (lib.sh's OUTDIR): ab.tsv (row, round, images/s, slowest block, cores; 0 for a run that
# gave no figure) and ab.log.
set -uo pipefail
SUITE=${SUITE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
BUNDLE_ARG=""
if [ "${1:-}" = --bundle ] && [ $# -eq 2 ]; then BUNDLE_ARG=$2
elif [ $# -ne 0 ]; then echo "ab_beside_dali.sh: expected no arguments or --bundle DIR, got \"$*\"" >&2; exit 2; fi
source "$SUITE/lib.sh"
find_bundle "$BUNDLE_ARG" || exit 1
ROWS=${AB_ROWS:-"off:py:CONVEYOR_BENCH_CPU_STAGE_THREAD=false auto:py dali:dali"}
ROUNDS=${AB_ROUNDS:-3}
SET=${AB_SET:-realistic}
FILES=${AB_FILES:-4096}
BATCH=256; THREADS=8
for row in $ROWS; do
  IFS=: read -r name kind _ <<< "$row"
  [[ "$kind" =~ ^(py|cli|dali)$ ]] || { echo "ab_beside_dali: row \"$row\": kind must be py, cli or dali, got \"$kind\"" >&2; exit 2; }
done
mkdir -p "$RAW" "$OUTDIR"
log_to "$OUTDIR/ab.log"
DATA=$WORK/data/$SET
dataset "$DATA" "$SET" "$FILES" || exit 1
warm_cache "$DATA"
EPOCH=$(( (FILES + BATCH - 1) / BATCH ))
CENV=$(conveyor_env); DENV=$(dali_env)
KNOBS="CONVEYOR_BENCH_DEVICE=gpu CONVEYOR_BENCH_CAPTURE=true CONVEYOR_BENCH_BATCH=$BATCH CONVEYOR_BENCH_THREADS=$THREADS"
KNOBS="$KNOBS CONVEYOR_BENCH_PREFETCH=2 CONVEYOR_BENCH_DATA=$DATA"
common=(--batch "$BATCH" --threads "$THREADS" --prefetch 2 --iterations 30 --repeats 5)
: > "$OUTDIR/ab.tsv"
for r in $(seq 1 "$ROUNDS"); do
  for row in $ROWS; do
    IFS=: read -r name kind extra <<< "$row"
    envs=${extra//,/ }
    out=ab_${name}_r$r
    case "$kind" in
      py) measure "$out" 180 "$CENV $envs" "row=$name round=$r" -- "$PYTHON" "$E2E/conveyor_e2e.py" --loader \
            --yaml "$PIPES/train_fused.yaml" --capture on --data "$DATA" "${common[@]}" ;;
      cli) measure "$out" 180 "$CENV $KNOBS $envs" "row=$name round=$r" -- "$CONVEYOR_BIN" bench \
             "$PIPES/train_fused.yaml" --json --warmup $((EPOCH + 3)) --iterations 30 --repeats 5 ;;
      dali) measure "$out" 180 "$DENV $envs" "row=$name round=$r" -- "$DALI_PYTHON" "$E2E/dali_e2e.py" --mode fused \
              --data "$DATA" "${common[@]}" ;;
    esac
    "$PYTHON" - "$RAW/$out.json" "$name" "$r" >> "$OUTDIR/ab.tsv" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    j = {}
ips = j.get("images_per_s") or j.get("samples_per_s", {}).get("median") or 0
low = j.get("images_per_s_min") or j.get("samples_per_s", {}).get("min") or 0
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{ips:.0f}\t{low:.0f}\t{j.get('cpu_cores_busy', 0)}")
EOF
    tail -1 "$OUTDIR/ab.tsv"
  done
done
"$PYTHON" - "$OUTDIR/ab.tsv" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, r, ips, low, cores = line.split("\t")
    rows.setdefault(name, []).append(float(ips))
dali = statistics.median(rows["dali"]) if rows.get("dali") else 0
for name, v in rows.items():
    m = statistics.median(v)
    ratio = f", {m / dali:.3f}x DALI" if dali else ""
    print(f"{name}: median {m:.0f} images/s over {len(v)} rounds ({', '.join(f'{x:.0f}' for x in v)}){ratio}")
EOF
end_log
