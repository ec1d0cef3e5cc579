#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cc) with clang++-14 and ASan + UBSan, outside Bazel
# (the Bazel toolchain is gcc, which has no libFuzzer coverage instrumentation).
#
# | input                 | where it comes from                                                     |
# |-----------------------|-------------------------------------------------------------------------|
# | library sources (.cc) | `bazel query` of the fuzzed libraries' deps, compiled here, instrumented |
# | CUDA kernels (.cu)    | the cuda_library archives Bazel builds (nvcc, not instrumented: never   |
# |                       | run here, linked so the operators' static registrations resolve)        |
# | output                | $FUZZ_BUILD_DIR (default /tmp/conveyor-fuzz): <target> binaries          |
#
# Incremental: an object is rebuilt when its source is newer; headers are not tracked one by one,
# so any change to a header of the tree (or to this script) drops every object (a stale object built
# against an older class layout breaks the link silently: ASan then reports overflows in static
# initialisers). `FUZZ_CLEAN=1` rebuilds everything. Usage: fuzz/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
BAZEL=${BAZEL:-bazel}
CXX=${FUZZ_CXX:-clang++-14}
OUT=${FUZZ_BUILD_DIR:-/tmp/conveyor-fuzz}
CUDA=${CUDA_PATH:-/usr/local/cuda}
[ "${FUZZ_CLEAN:-0}" = 1 ] && rm -rf "$OUT"
mkdir -p "$OUT/obj"
stamp=$( (cat "$0"; find core operators fuzz -name '*.h' -o -name '*.cuh' | sort | xargs cat) | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/headers.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$OUT/obj" && mkdir -p "$OUT/obj"
  echo "$stamp" > "$OUT/headers.stamp"
fi
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1)
# $OUT/gen: C++ generated from the .proto files the libraries hold (protoc, as their Bazel genrules).
FLAGS=(-std=c++20 -I. -I"$OUT/gen" -isystem "$CUDA/include" -Wno-unused-command-line-argument -DCONVEYOR_FUZZING)
LIBS=(//operators:all_operators //core/pipeline:spec //core/interop //operators/video:video_core)

# FUZZ_REUSE_SOURCES=1 skips the Bazel query and archive build (a busy shared Bazel server) and
# reuses the last lists written below.
if [ "${FUZZ_REUSE_SOURCES:-0}" = 1 ] && [ -f "$OUT/sources.txt" ] && [ -f "$OUT/archives.txt" ]; then
  mapfile -t srcs <"$OUT/sources.txt"
  mapfile -t archives <"$OUT/archives.txt"
else
  # Sources of everything the targets link, minus headers; .cu files come as Bazel-built archives.
  mapfile -t labels < <($BAZEL query --noshow_progress \
      "kind('source file', deps($(echo "${LIBS[*]}" | sed 's/ / + /g')))" 2>/dev/null |
      grep -v '^@' | grep -E '\.(cc|cu|proto)$')
  srcs=() cu_targets=()
  for l in "${labels[@]}"; do
    p=${l#//}; p=${p/://}
    if [[ $p == *.proto ]]; then
      gen="$OUT/gen/${p%.proto}.pb.cc"
      [ -f "$gen" ] && [ ! "$p" -nt "$gen" ] || { mkdir -p "$OUT/gen" && /usr/bin/protoc --proto_path=. --cpp_out="$OUT/gen" "$p"; }
      srcs+=("$gen")
    elif [[ $p == *.cu ]]; then cu_targets+=("$l"); else srcs+=("$p"); fi
  done
  # A .cu file is the one source of a cuda_library named after it (foo_gpu.cu -> :foo_gpu).
  archives=()
  if [ ${#cu_targets[@]} -gt 0 ]; then
    rules=("${cu_targets[@]%.cu}")
    $BAZEL build --noshow_progress "${rules[@]}" 2>&1 | grep -vE '^(INFO|Loading|Analyzing|Target|  bazel-bin)' || true
    bin=$($BAZEL info bazel-bin 2>/dev/null)
    for r in "${rules[@]}"; do p=${r#//}; archives+=("$bin/${p%%:*}/lib${p##*:}.a"); done
  fi
  printf '%s\n' "${srcs[@]}" >"$OUT/sources.txt"
  printf '%s\n' "${archives[@]}" >"$OUT/archives.txt"
fi

export CXX FLAGS_STR="${FLAGS[*]} ${SAN[*]}"
objs=()
jobs=()
for s in "${srcs[@]}"; do
  o="$OUT/obj/${s//\//_}.o"; objs+=("$o"); jobs+=("$s" "$o")
done
printf '%s\0%s\0' "${jobs[@]}" |
  xargs -0 -n2 -P"${FUZZ_JOBS:-2}" bash -c 'if [ ! -f "$2" ] || [ "$1" -nt "$2" ]; then echo "  CXX $1"
      $CXX $FLAGS_STR -fsanitize=fuzzer-no-link -c "$1" -o "$2.tmp" && mv "$2.tmp" "$2" && exit 0
      # A source being edited in a shared checkout: keep the last object that built, say so.
      [ -f "$2" ] && { echo "  KEPT previous object for $1 (it does not compile now)"; exit 0; }; exit 1; fi' _

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=($(ls fuzz/*_fuzz.cc | xargs -n1 basename | sed 's/\.cc$//'))
for t in "${targets[@]}"; do
  echo "  LINK $t"
  $CXX "${FLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer "fuzz/$t.cc" "${objs[@]}" \
      -Wl,--start-group "${archives[@]}" -Wl,--end-group \
      -L"$CUDA/lib64" -lcudart_static -lyaml-cpp -ltbb -lturbojpeg -ljpeg -lpng16 -ltiff -lwebp -lwebpdemux -lexif -lopenjp2 -lnetpbm -lstb -lprotobuf-lite -larchive -lcurl -lavformat -lavcodec -lswscale -lavutil -ldl -lrt -lpthread \
      -o "$OUT/$t"
done
echo "fuzz/build.sh: ${#targets[@]} targets in $OUT"
