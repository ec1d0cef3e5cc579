#!/usr/bin/env bash
# Downloads NVIDIA DALI 2.4 (nvidia-dali-cuda130, CPython 3.12, manylinux x86-64) and every
# dependency the GPU machine lacks into .dali/ (git-ignored), then cuts the wheels into part folders
# that each fit one device call (the working tree that travels is at most 64 MiB).
#
#   tools/fetch_dali.sh [--spec 'nvidia-dali-cuda130>=2.4,<2.5'] [--no-extras] [--budget-mib 56]
#
# | output                        | what                                                           |
# |-------------------------------|----------------------------------------------------------------|
# | .dali/wheels/*.whl            | the wheels as downloaded                                       |
# | .dali/manifest.txt            | one line per wheel: sha256, bytes, name, its pieces            |
# | .dali/parts/NN/               | pieces (name.whl.NNN, <= 48 MiB) and whole small wheels, each  |
# |                               | folder < budget MiB, plus manifest.txt and parts.txt (which   |
# |                               | part holds each piece)                                         |
# | stdout, last lines            | `part: .dali/parts/NN (X MiB)`, one per folder                 |
#
# Dependencies: Requires-Dist of each wheel (read from its METADATA with unzip -p), environment
# markers evaluated for CPython 3.12 on x86-64 Linux, walked until closed. Packages the GPU image
# already has (DEVICE_HAS below, from /work/.library/device/KINDS.md) are not fetched; DALI's
# `nvidia-nvimgcodec-cu13[all]` extras (nvjpeg, nvjpeg2k, nvtiff) are, unless --no-extras.
# Then, on the device (tools/stage_dali.sh): one call per part folder, the last with --install.
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC='nvidia-dali-cuda130>=2.4,<2.5'
EXTRAS=1
BUDGET_MIB=56
PIECE_MIB=48
while [ $# -gt 0 ]; do
  case "$1" in
    --spec) SPEC=$2; shift ;;
    --no-extras) EXTRAS=0 ;;
    --budget-mib) BUDGET_MIB=$2; shift ;;
    *) echo "fetch_dali: unknown argument \"$1\" (expected --spec S, --no-extras, --budget-mib N)" >&2; exit 2 ;;
  esac
  shift
done
[ "$BUDGET_MIB" -gt "$PIECE_MIB" ] || { echo "fetch_dali: --budget-mib must exceed the $PIECE_MIB MiB pieces, got $BUDGET_MIB" >&2; exit 2; }
command -v unzip >/dev/null || { echo "fetch_dali: needs unzip (apt-get install unzip)" >&2; exit 1; }

DIR=.dali
rm -rf "$DIR/wheels" "$DIR/parts"
mkdir -p "$DIR/wheels"

# The GPU image's Python packages (normalized names), as listed in KINDS.md on 2026-11-17.
DEVICE_HAS="absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build
certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core
cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin
jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax
llvmlite lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack
multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft
nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py
nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec
patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11
py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu
safetensors scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers
setuptools shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard
tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio
torchdiffeq torch-geometric torchmetrics torchvision tqdm transformers treescope triton typer
typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp"

download() {  # download SPEC... into .dali/wheels: wheels only, for the device's Python and platform
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DIR/wheels" "$@"
}

# The dependency walk: prints the requirement strings still to fetch (one per line) given the wheels
# in .dali/wheels. pip's vendored `packaging` parses requirements and evaluates markers.
missing_requirements() {
  DEVICE_HAS="$DEVICE_HAS" EXTRAS="$EXTRAS" python3 - "$DIR/wheels" <<'EOF'
import os, re, sys, zipfile
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
       "implementation_name": "cpython", "platform_python_implementation": "CPython"}
has = {canonicalize_name(n) for n in os.environ["DEVICE_HAS"].split()}
folder = sys.argv[1]
wheels = {}  # name -> METADATA text
for f in sorted(os.listdir(folder)):
    if f.endswith(".whl"):
        with zipfile.ZipFile(os.path.join(folder, f)) as z:
            meta = next(n for n in z.namelist() if re.match(r"[^/]+\.dist-info/METADATA$", n))
            wheels[canonicalize_name(f.split("-")[0])] = z.read(meta).decode("utf-8", "replace")
wanted_extras = {}  # name -> extras some fetched wheel asks of it
for text in wheels.values():
    for line in text.splitlines():
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            if os.environ["EXTRAS"] == "1":
                wanted_extras.setdefault(canonicalize_name(req.name), set()).update(req.extras)
todo = {}
for name, text in wheels.items():
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        extras = [""] + sorted(wanted_extras.get(name, ()))
        if req.marker is not None and not any(req.marker.evaluate(dict(env, extra=e)) for e in extras):
            continue
        dep = canonicalize_name(req.name)
        if dep in has or dep in wheels:
            continue
        todo[dep] = req.name + str(req.specifier)
for spec in todo.values():
    print(spec)
EOF
}

echo "fetch_dali: $SPEC"
download "$SPEC"
for _ in 1 2 3 4 5 6; do  # each round fetches the needs of the last one's wheels
  mapfile -t todo < <(missing_requirements)
  [ ${#todo[@]} -eq 0 ] && break
  echo "fetch_dali: dependencies the GPU machine lacks: ${todo[*]}"
  download "${todo[@]}"
done
[ ${#todo[@]} -eq 0 ] || { echo "fetch_dali: dependency walk did not close: ${todo[*]}" >&2; exit 1; }

# Pieces and part folders. Large wheels first, then fill each folder's remaining room with small ones.
PIECE=$((PIECE_MIB * 1024 * 1024))
BUDGET=$((BUDGET_MIB * 1024 * 1024))
MANIFEST="$DIR/manifest.txt"
STAGING="$DIR/pieces"
rm -rf "$STAGING"
mkdir -p "$STAGING"
: > "$MANIFEST"
for w in "$DIR"/wheels/*.whl; do
  name=$(basename "$w")
  size=$(stat -c %s "$w")
  sum=$(sha256sum "$w" | cut -d' ' -f1)
  if [ "$size" -gt $((50 * 1000 * 1000)) ]; then
    split -b "$PIECE" -d -a 3 "$w" "$STAGING/$name."
    pieces=$(cd "$STAGING" && ls "$name".[0-9][0-9][0-9] | paste -sd, -)
  else
    cp "$w" "$STAGING/$name"
    pieces=$name
  fi
  echo "$sum $size $name $pieces" >> "$MANIFEST"
done
python3 - "$STAGING" "$DIR/parts" "$BUDGET" "$MANIFEST" <<'EOF'
import os, shutil, sys
src, dst, budget, manifest = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
items = sorted(((os.path.getsize(os.path.join(src, f)), f) for f in os.listdir(src)), reverse=True)
room = budget - 2 * os.path.getsize(manifest)  # manifest.txt and parts.txt travel in every part
bins = []  # first-fit decreasing
for size, name in items:
    if size > room:
        sys.exit(f"fetch_dali: {name} ({size} bytes) does not fit a part of {budget} bytes")
    for b in bins:
        if b[0] + size <= room:
            b[0] += size; b[1].append(name); break
    else:
        bins.append([size, [name]])
where = []  # "NN piece" lines: stage_dali.sh names the part folder of a missing piece
for i, (size, names) in enumerate(bins, 1):
    part = os.path.join(dst, "%02d" % i)
    os.makedirs(part)
    for n in names:
        shutil.move(os.path.join(src, n), os.path.join(part, n))
        where.append("%02d %s" % (i, n))
for i in range(1, len(bins) + 1):
    part = os.path.join(dst, "%02d" % i)
    shutil.copy(manifest, part)
    with open(os.path.join(part, "parts.txt"), "w") as f:
        f.write("\n".join(sorted(where)) + "\n")
EOF
rmdir "$STAGING"
echo "fetch_dali: $(wc -l < "$MANIFEST") wheels, $(du -sh "$DIR/wheels" | cut -f1); manifest $MANIFEST"
for part in "$DIR"/parts/*/; do
  part=${part%/}
  echo "part: $part ($(du -sm "$part" | cut -f1) MiB)"
done
