#!/usr/bin/env bash
# Builds every test and benchmark here and packs them, with the shared libraries they need, into
# .bundle/ (git-ignored, < 64 MiB) so they run on a GPU machine that has none of our dependencies.
#
#   tools/gpu_bundle.sh              # build + pack
#   BUNDLE_TESTS='decoders|pipelines' tools/gpu_bundle.sh   # only the test binaries matching the regex
#   BUNDLE_ONLY_TESTS=1   pack only the selected test binaries and their shared libraries (no
#                         benchmarks, CLI, wheel, Python tests, pipelines, suite): e.g. the video
#                         tests with Debian's FFmpeg libraries fit a device call's 64 MiB
#   BUNDLE_TARGETS=//tests/operators/video/...   build and query this Bazel pattern instead of //...
#                         (with BUNDLE_ONLY_TESTS=1: a half-written file elsewhere cannot stop it)
#   then on the GPU machine:  tar xJf .gpu_bundle/bundle.tar.xz && .bundle/run.sh [--sanitize] [--bench] [--python]   (logs to $OUT or ./out)
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=.bundle
BAZEL=${BAZEL:-bazel}

TARGETS=${BUNDLE_TARGETS:-//...}
ONLY_TESTS=${BUNDLE_ONLY_TESTS:-0}
$BAZEL build "$TARGETS" >/dev/null
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/tests" "$BUNDLE/bench" "$BUNDLE/lib" "$BUNDLE/python"

bin=$($BAZEL info bazel-bin 2>/dev/null)
libs=()
for target in $($BAZEL query "kind(\"cc_test\", $TARGETS)" 2>/dev/null | grep -E "${BUNDLE_TESTS:-.}"); do
  rel=${target#//}; rel=${rel/://}
  name=${rel//\//__}
  # The runfiles tree holds the binary and its data (YAML files, plugin .so files) at the paths the
  # test expects relative to its working directory.
  cp -rL "$bin/$rel.runfiles" "$BUNDLE/tests/$name.runfiles"
  strip --strip-debug "$BUNDLE/tests/$name.runfiles/conveyor/$rel" 2>/dev/null || true
  echo "$name conveyor/$rel" >> "$BUNDLE/tests/index"
  libs+=("$bin/$rel")
done
# Every other ELF file in the tests' runfiles (the CLI, make_sample_data, plugins such as the video
# plugin libconveyor_video.so): their libraries (FFmpeg's for the plugin, libturbojpeg for
# make_sample_data, ...) go into lib/ too, which run.sh puts on LD_LIBRARY_PATH, where the
# binaries' loader and the plugins' dlopen find them.
while IFS= read -r elf; do
  [ "$(head -c 4 "$elf" | od -An -c | tr -d ' ')" = '177ELF' ] && libs+=("$elf")
done < <(find "$BUNDLE/tests" -type f \( -perm -u+x -o -name '*.so*' \))
# The binaries with GPU tests (tag gpu), for run.sh --gpu-only (the sanitizer sweeps).
for target in $($BAZEL query "attr(tags, \"gpu\", kind(\"cc_test\", $TARGETS))" 2>/dev/null | grep -E "${BUNDLE_TESTS:-.}"); do
  rel=${target#//}; rel=${rel/://}
  echo "${rel//\//__}" >> "$BUNDLE/tests/gpu_index"
done
if [ "$ONLY_TESTS" != 1 ]; then
for target in $($BAZEL query 'attr(tags, "benchmark", kind("cc_binary", //...))' 2>/dev/null); do
  rel=${target#//}; rel=${rel/://}
  cp -L "$bin/$rel" "$BUNDLE/bench/"
  strip --strip-debug "$BUNDLE/bench/$(basename "$rel")"
  libs+=("$bin/$rel")
done
# The CLI with the video plugin beside it and make_test_videos (the video benchmark's data,
# bench/video/run.sh) are in every bundle that holds the suite, whatever BUNDLE_TARGETS built.
$BAZEL build //cli:conveyor //tools/make_test_videos:make_test_videos >/dev/null
for extra in core/capi/libconveyor_c.so tools/conveyor cli/conveyor cli/libconveyor_video.so tools/conveyor_smoke tools/make_test_images tools/make_sample_data/make_sample_data tools/make_test_videos/make_test_videos tools/soak/conveyor_soak; do
  if [ -f "$bin/$extra" ]; then cp -L "$bin/$extra" "$BUNDLE/"; libs+=("$bin/$extra"); fi
done
if [ -d python ]; then cp -r python/. "$BUNDLE/python/"; fi
python3 python/build_wheel.py --lib "$bin/core/capi/libconveyor_c.so" --out "$BUNDLE/wheel" >/dev/null  # there: pip install .bundle/wheel/conveyor-*.whl
# The wheel holds libconveyor_c.so and the libraries lib/ holds too (ICU alone is 31 MB), deflated:
# xz cannot see that they are the same bytes, and the wheel cost ~28 MB of the packed bundle. Stored
# (uncompressed) entries are the same wheel to pip (RECORD hashes the files, not the archive) and
# cost almost nothing once xz's dictionary has seen lib/.
python3 - "$BUNDLE"/wheel/*.whl <<'PY'
import os, sys, zipfile
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(path + ".stored", "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, info.date_time)
            entry.external_attr = info.external_attr  # file modes (the libraries' x bits)
            dst.writestr(entry, src.read(info), compress_type=zipfile.ZIP_STORED)
    os.replace(path + ".stored", path)
PY
if [ -d tests/python ]; then mkdir -p "$BUNDLE/python_tests" && cp -r tests/python/. "$BUNDLE/python_tests/"; fi
# Files the Python tests read, at the bundle's layout (tests/python/conftest.py `repo_file`): the
# example pipelines as .bundle/pipelines (test_pipeline.py), bench/ as .bundle/suite below
# (test_make_results.py runs suite/make_results.py).
mkdir -p "$BUNDLE/pipelines" && cp pipelines/*.yaml "$BUNDLE/pipelines/"
# test_torchrun_check.py imports ../distributed/torchrun_check.py (the torchrun job it judges).
mkdir -p "$BUNDLE/distributed" && cp tests/distributed/*.py tests/distributed/*.sh "$BUNDLE/distributed/"
# Peer scripts (PyTorch, torchvision) that benchmarks compare against on the GPU machine.
if [ -d bench ]; then mkdir -p "$BUNDLE/peers" && find bench -maxdepth 1 -name '*.py' ! -name make_results.py ! -name 'results_*.py' -exec cp {} "$BUNDLE/peers/" \;; fi
# The end-to-end suite (issue 13): there, bash .bundle/suite/run_all.sh (bench/README.md).
if [ -d bench ]; then mkdir -p "$BUNDLE/suite" && cp -r bench/. "$BUNDLE/suite/" && find "$BUNDLE/suite" -name __pycache__ -prune -exec rm -rf {} +; fi
fi
git describe --always --dirty > "$BUNDLE/commit" 2>/dev/null || true

# Shared libraries from Debian that the GPU machine lacks (TBB, yaml-cpp 0.7, libjpeg-turbo, ...).
# glibc and libstdc++ stay the machine's own (newer there, and backward compatible).
for f in "${libs[@]}"; do ldd "$f" 2>/dev/null; done | awk '/=> \//{print $3}' | sort -u | while read -r so; do
  case "$(basename "$so")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    *) cp -L "$so" "$BUNDLE/lib/" ;;
  esac
done

# FFmpeg's libraries link ~130 others (audio codecs, network protocols, SVG, VA-API, ...; ~52 MB
# packed) that nothing here calls: each becomes a stub with the same soname and symbols, and what
# only they needed is dropped (tools/ffmpeg_stubs.py says which are kept real and why).
python3 tools/ffmpeg_stubs.py "$BUNDLE/lib" "${libs[@]}"
if [ -x "$BUNDLE/make_test_videos" ] && ! LD_LIBRARY_PATH="$BUNDLE/lib" "$BUNDLE/make_test_videos" --list >/dev/null; then
  echo "gpu_bundle.sh: make_test_videos does not start with the bundle's FFmpeg libraries (a stub too many?)" >&2
  exit 1
fi

# nvJPEG2000 (optional): the GPU machines have none. Where tools/fetch_dali.sh left its wheel, its
# library goes into lib/, which run.sh puts on LD_LIBRARY_PATH: the decoder's search finds it there
# by soname (operators/decoders/nvjpeg2k/nvjpeg2k_loader.h). No wheel: JPEG 2000 stays on the CPU
# there, and the nvJPEG2000 tests say so and skip.
for whl in .dali/wheels/nvidia_nvjpeg2k_cu13-*.whl; do
  [ -f "$whl" ] || continue
  python3 - "$whl" "$BUNDLE/lib" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0") as src, \
        open(sys.argv[2] + "/libnvjpeg2k.so.0", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  echo "bundle: nvJPEG2000 from $(basename "$whl")"
done

cp tools/bundle_run.sh "$BUNDLE/run.sh"
cp tools/test_summary.py "$BUNDLE/"
cp tools/batch_costs.py "$BUNDLE/"  # beside a bench JSON on the device (tests/python/test_batch_costs.py)
cp tools/decode_poles.py "$BUNDLE/"  # a run's decoder trace read back (tests/python/test_decode_poles.py)
chmod +x "$BUNDLE/run.sh"
echo "bundle: $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE ($(cat "$BUNDLE/tests/index" 2>/dev/null | wc -l) test binaries)"

# GPU_BUNDLE_NO_PACK=1: leave .bundle/ unpacked (tools/ab_bundles.sh packs several together).
[ "${GPU_BUNDLE_NO_PACK:-0}" = 1 ] && exit 0

# One compressed file travels more cheaply than the folder. The test binaries are mostly the same
# operator code linked 70 times: xz with a dictionary larger than the whole tar stores each copy
# once (477 MB of files -> ~23 MB, about a minute here), where gzip's 32 KB window could not (137 MB,
# over a device call's 64 MiB). There: tar xJf .gpu_bundle/bundle.tar.xz && .bundle/run.sh
mkdir -p .gpu_bundle
rm -f .gpu_bundle/bundle.tar.gz
tar cf - --sort=name "$BUNDLE" | xz -T1 --lzma2=preset=3,dict=1GiB > .gpu_bundle/bundle.tar.xz
echo "packed: $(du -sh .gpu_bundle/bundle.tar.xz | cut -f1) in .gpu_bundle/bundle.tar.xz"
# A device call carries at most 64 MiB of working tree: say so before a call is refused.
size=$(stat -c %s .gpu_bundle/bundle.tar.xz)
if [ "$size" -gt $((56 << 20)) ]; then
  echo "gpu_bundle.sh: warning: the packed bundle is $((size >> 20)) MiB; a device call carries at most 64 MiB" \
       "with the rest of the working tree (split it, or bundle fewer binaries)" >&2
fi
