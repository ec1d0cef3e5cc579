# shellcheck shell=bash
# Sourced by tools/device_ab.sh and tools/device_overhead_ab.sh on the GPU machine: unpacks the
# bundles tools/ab_bundles.sh made (.gpu_bundle/ab.tar.xz; or the older a.tar.xz + b.tar.xz) into
# A/.bundle, B/.bundle, ... and sets VARIANTS to the letters found (A first: the baseline).
# AB_VARIANTS="A C D" in the environment keeps only those (one bundle, several device calls that
# each measure some of its variants).
ab_unpack() {
  if [ -f .gpu_bundle/ab.tar.xz ]; then
    tar xJf .gpu_bundle/ab.tar.xz || return 1
  else
    mkdir -p A B
    tar xJf .gpu_bundle/a.tar.xz -C A && tar xJf .gpu_bundle/b.tar.xz -C B || return 1
  fi
  VARIANTS=()
  local v
  for v in ${AB_VARIANTS:-A B C D E F}; do [ -x "$v/.bundle/run.sh" ] && VARIANTS+=("$v"); done
  [ "${#VARIANTS[@]}" -ge 2 ] || { echo "ab_unpack: fewer than two bundles in .gpu_bundle (run tools/ab_bundles.sh)" >&2; return 1; }
}
