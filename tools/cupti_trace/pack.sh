#!/usr/bin/env bash
# Builds the CUPTI tracer and puts it, with the toolkit's libcupti it was built against, in
# .gpu_bundle/cupti/ (carried with the bundle; tools/device_trace_check.sh uses it).
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //tools/cupti_trace:libcupti_trace.so
mkdir -p .gpu_bundle/cupti
cp -f bazel-bin/tools/cupti_trace/libcupti_trace.so "${CUDA_PATH:-/usr/local/cuda}/lib64/libcupti.so.13" .gpu_bundle/cupti/
ls -la .gpu_bundle/cupti
