#!/usr/bin/env bash
# Builds two GPU bundles for an A/B device call: A from the current commit (main), B from BRANCH,
# as .gpu_bundle/a.tar.xz and .gpu_bundle/b.tar.xz (carry .gpu_bundle; ~24 MB each, both fit one
# call's 64 MiB), then tools/device_ab.sh runs them side by side on the GPU machine. The branch is
# checked out in this working tree for its build (incremental: only what the branch changes is
# rebuilt) and the original commit is checked out again at the end; the tree must be clean.
#   bash tools/ab_bundles.sh wip/resample-two-tap-ilp
set -euo pipefail
cd "$(dirname "$0")/.."
BRANCH=${1:?usage: tools/ab_bundles.sh BRANCH}
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "ab_bundles: commit or stash first" >&2; exit 1; }
HERE=$(git rev-parse --abbrev-ref HEAD)
[ "$HERE" = HEAD ] && HERE=$(git rev-parse HEAD)
bash tools/gpu_bundle.sh >/dev/null
mv .gpu_bundle/bundle.tar.xz .gpu_bundle/a.tar.xz
git checkout -q "$BRANCH"
trap 'git checkout -q "$HERE"' EXIT
bash tools/gpu_bundle.sh >/dev/null
mv .gpu_bundle/bundle.tar.xz .gpu_bundle/b.tar.xz
echo "ab_bundles: a = $(git rev-parse --short "$HERE"), b = $(git rev-parse --short "$BRANCH") in .gpu_bundle/"
