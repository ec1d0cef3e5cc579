#!/usr/bin/env bash
# Builds GPU bundles for an A/B (or A/B/C/...) device call: A from the current commit (main), B, C, ...
# from the branches given, packed together as .gpu_bundle/ab.tar.xz (A/.bundle, B/.bundle, ...).
# The variants are mostly the same bytes, so one xz stream with a large dictionary, its files
# ordered so that each path's copies sit side by side, stores them about once: four variants fit a
# device call's 64 MiB where two separate bundles (~24 MB each) were the limit. tools/device_ab.sh
# (kernels) and tools/device_overhead_ab.sh (executor overhead) run them on the GPU machine. Each
# branch is checked out in this working tree for its build (incremental) and the original commit is
# checked out again at the end; the tree must be clean.
#   bash tools/ab_bundles.sh wip/resample-one-launch [wip/other ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [ $# -le 5 ] || { echo "usage: tools/ab_bundles.sh BRANCH [BRANCH ...] (1 to 5 branches)" >&2; exit 2; }
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "ab_bundles: commit or stash first" >&2; exit 1; }
HERE=$(git rev-parse --abbrev-ref HEAD)
[ "$HERE" = HEAD ] && HERE=$(git rev-parse HEAD)
for b in "$@"; do git rev-parse --verify -q "$b^{commit}" >/dev/null || { echo "ab_bundles: no branch or commit \"$b\"" >&2; exit 2; }; done
AB=.ab
rm -rf "$AB" && mkdir -p "$AB" .gpu_bundle
trap 'git checkout -q "$HERE"; rm -f tools/.ab_gpu_bundle.sh' EXIT
# This commit's gpu_bundle.sh builds every variant (a branch may predate GPU_BUNDLE_NO_PACK).
cp tools/gpu_bundle.sh tools/.ab_gpu_bundle.sh
names=(A B C D E F)
refs=("$HERE" "$@")
for i in "${!refs[@]}"; do
  git checkout -q "${refs[$i]}"
  GPU_BUNDLE_NO_PACK=1 bash tools/.ab_gpu_bundle.sh >/dev/null
  mkdir -p "$AB/${names[$i]}" && mv .bundle "$AB/${names[$i]}/.bundle"
  echo "ab_bundles: ${names[$i]} = $(git rev-parse --short HEAD) (${refs[$i]})"
done
git checkout -q "$HERE"
trap - EXIT
# Each relative path once per variant, the copies next to each other in the stream.
(cd "$AB" && find . -mindepth 2 \( -type f -o -type l \) | sed 's|^\./||' |
   awk -F/ '{v=$1; sub(/^[^\/]*\//, ""); print $0 "\t" v}' | LC_ALL=C sort | awk -F'\t' '{print $2 "/" $1}') > "$AB.list"
rm -f .gpu_bundle/a.tar.xz .gpu_bundle/b.tar.xz .gpu_bundle/ab.tar.xz
tar cf - -C "$AB" --no-recursion -T "$AB.list" | xz -T1 --lzma2=preset=3,dict=1GiB > .gpu_bundle/ab.tar.xz
rm -rf "$AB" "$AB.list" tools/.ab_gpu_bundle.sh
size=$(stat -c %s .gpu_bundle/ab.tar.xz)
echo "ab_bundles: $(( ${#refs[@]} )) variants, $((size >> 20)) MiB in .gpu_bundle/ab.tar.xz"
[ "$size" -le $((60 << 20)) ] || echo "ab_bundles: warning: over 60 MiB; a device call carries at most 64 MiB" >&2
