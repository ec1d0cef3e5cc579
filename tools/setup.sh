#!/usr/bin/env bash
# Installs exactly the Debian 12 packages the build needs; skips what is already installed.
# The CUDA toolkit is expected at /usr/local/cuda (or $CUDA_PATH); nothing else is downloaded.
set -euo pipefail
PACKAGES=(
  bazel-bootstrap bazel-platforms bazel-rules-java   # Bazel 4.2.3 and the rules it needs offline
  g++ python3 python3-numpy python3-pytest           # host compiler; CPU-side Python tests
  libtbb-dev libyaml-cpp-dev                         # CPU stage, YAML loader
  libgtest-dev libgmock-dev libbenchmark-dev         # tests and benchmarks
  libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev   # image decoding: JPEG, PNG
  libtiff-dev libwebp-dev libopenjp2-7-dev           #   TIFF, WebP, JPEG 2000
  libnetpbm-dev libstb-dev                           #   PNM (libnetpbm), BMP (stb_image)
  libexif-dev                                        #   EXIF orientation (adjust_orientation)
  libcli11-dev                                       # the conveyor CLI's argument parsing
  libarchive-dev                                     # readers.webdataset: tar shards
  protobuf-compiler libprotobuf-dev                  # readers.tfrecord: tf.train.Example
  python3-protobuf                                   #   its tests encode Examples with protobuf's Python runtime
  libcurl4-openssl-dev                               # shards and files over HTTP(S)
  nlohmann-json3-dev                                 # readers.coco: COCO JSON (header-only)
  libavformat-dev libavcodec-dev libavutil-dev       # video: demux (libavformat), CPU decode (libavcodec)
  libswscale-dev libffmpeg-nvenc-dev                 #   colour conversion; NVDEC headers + loader
  clang-14 libclang-rt-14-dev                        # fuzz/ (libFuzzer + ASan/UBSan runtimes)
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi
CUDA=${CUDA_PATH:-/usr/local/cuda}
[ -x "$CUDA/bin/nvcc" ] || { echo "setup: no nvcc at $CUDA/bin/nvcc (install the CUDA toolkit or set CUDA_PATH)" >&2; exit 1; }
echo "setup: $("$CUDA/bin/nvcc" --version | tail -1), $(bazel --version 2>/dev/null)"
