#!/usr/bin/env bash
# Runs on the GPU machine: gathers the part folders that tools/fetch_dali.sh made (one device call
# each, since one call carries at most 64 MiB), then joins the pieces, checks them and installs DALI.
#
#   tools/stage_dali.sh .dali/parts/01                 # copy this part into $STAGE
#   ...
#   tools/stage_dali.sh --install .dali/parts/05       # copy the last part, then install
#   tools/stage_dali.sh --install                      # install from what $STAGE already holds
#
# | variable / option | default          | meaning                                                |
# |-------------------|------------------|--------------------------------------------------------|
# | STAGE, --stage    | /root/stage      | where the parts gather (survives between calls only   |
# |                   |                  | while the machine stays warm: make the calls in a row) |
# | TARGET, --target  | /root/dali_site  | pip --target folder; use it as PYTHONPATH for DALI     |
#
# --install: every wheel of manifest.txt is joined from its pieces (name.whl.000, .001, ...), its size
# and sha256 checked against the manifest, then all are installed with
# `pip install --no-index --no-deps --target $TARGET`, and `import nvidia.dali` is tried. A missing
# piece is named with the part folder that carries it (parts.txt). Exit 1 on any failure.
set -euo pipefail
STAGE=${STAGE:-/root/stage}
TARGET=${TARGET:-/root/dali_site}
INSTALL=0
PARTS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --install) INSTALL=1 ;;
    --stage) STAGE=$2; shift ;;
    --target) TARGET=$2; shift ;;
    -*) echo "stage_dali: unknown option \"$1\" (expected --install, --stage DIR, --target DIR)" >&2; exit 2 ;;
    *) PARTS+=("$1") ;;
  esac
  shift
done
[ ${#PARTS[@]} -gt 0 ] || [ "$INSTALL" = 1 ] || {
  echo "usage: stage_dali.sh [--install] [--stage DIR] [--target DIR] [PART_DIR...]" >&2; exit 2; }

mkdir -p "$STAGE"
for part in "${PARTS[@]}"; do
  [ -f "$part/manifest.txt" ] || { echo "stage_dali: $part is not a part folder of tools/fetch_dali.sh (no manifest.txt in it)" >&2; exit 1; }
  cp -f "$part"/* "$STAGE/"
  echo "stage_dali: staged $part ($(du -sm "$part" | cut -f1) MiB) into $STAGE"
done
[ "$INSTALL" = 1 ] || { echo "stage_dali: $STAGE holds $(ls "$STAGE" | wc -l) files"; exit 0; }

MANIFEST="$STAGE/manifest.txt"
[ -f "$MANIFEST" ] || { echo "stage_dali: no $MANIFEST: stage a part folder first" >&2; exit 1; }
mkdir -p "$STAGE/wheels"
bad=0
while read -r sum size name pieces; do
  out="$STAGE/wheels/$name"
  missing=()
  for p in ${pieces//,/ }; do
    [ -f "$STAGE/$p" ] || missing+=("$p (part $(awk -v p="$p" '$2 == p {print $1}' "$STAGE/parts.txt" 2>/dev/null))")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "stage_dali: $name: missing pieces: ${missing[*]}; stage those part folders first" >&2
    bad=1; continue
  fi
  if [ "$pieces" = "$name" ]; then cp -f "$STAGE/$name" "$out"; else
    : > "$out"; for p in ${pieces//,/ }; do cat "$STAGE/$p" >> "$out"; done
  fi
  got_size=$(stat -c %s "$out")
  got_sum=$(sha256sum "$out" | cut -d' ' -f1)
  if [ "$got_size" != "$size" ] || [ "$got_sum" != "$sum" ]; then
    echo "stage_dali: $name: expected $size bytes sha256 $sum, got $got_size bytes sha256 $got_sum" >&2
    bad=1
  fi
done < "$MANIFEST"
[ "$bad" = 0 ] || exit 1
echo "stage_dali: $(wc -l < "$MANIFEST") wheels joined and checked; installing into $TARGET"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$TARGET" \
  "$STAGE"/wheels/*.whl
PYTHONPATH="$TARGET${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
  'import nvidia.dali as d; print("stage_dali: nvidia.dali", d.__version__, "from", d.__file__)'
