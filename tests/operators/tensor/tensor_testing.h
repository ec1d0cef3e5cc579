// Helpers for the tensor and math operator tests: elements of any dtype as double, random batches
// of any dtype, and a runner for operators with several inputs.
//
// RunMulti builds the operator from the registry and binds its workspace by hand, so it takes any
// number of inputs whatever the schema declares (cat, stack and math take a repeated input,
// OpSchema::RepeatLastInput). Outputs are poisoned before the run, as OpHarness does.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "core/op/registry.h"
#include "core/op/tbb_thread_pool.h"
#include "core/tensor/copy.h"
#include "core/tensor/half.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {

// Element j of sample s, exactly (int64 beyond 2^53 rounds).
inline double Element(const TensorListCPU& t, int s, int64_t j) {
  const void* p = t.raw_sample(s);
  switch (t.dtype()) {
    case DType::kBool: return static_cast<const uint8_t*>(p)[j] != 0;
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[j];
    case DType::kInt8: return static_cast<const int8_t*>(p)[j];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[j];
    case DType::kInt16: return static_cast<const int16_t*>(p)[j];
    case DType::kInt32: return static_cast<const int32_t*>(p)[j];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[j]);
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(p)[j]);
    case DType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[j]);
    case DType::kFloat32: return static_cast<const float*>(p)[j];
    case DType::kFloat64: return static_cast<const double*>(p)[j];
  }
  return 0;
}

inline std::vector<double> Elements(const TensorListCPU& t, int s) {
  std::vector<double> v;
  for (int64_t j = 0; j < t.shape(s).num_elements(); ++j) v.push_back(Element(t, s, j));
  return v;
}

// One TensorList of `dtype` holding `values` (one vector per sample): integers wrapped to the
// type (through int64), half types rounded to nearest even.
inline TensorListCPU TypedBatch(const std::vector<Shape>& shapes, DType dtype, const std::vector<std::vector<double>>& values,
                                Layout layout = {}) {
  TensorListCPU list;
  list.Resize(shapes, dtype);
  list.set_layout(std::move(layout));
  for (int s = 0; s < list.num_samples(); ++s) {
    void* p = list.raw_sample(s);
    const std::vector<double>& v = values[static_cast<size_t>(s)];
    for (size_t j = 0; j < v.size(); ++j) {
      switch (dtype) {
        case DType::kBool: static_cast<bool*>(p)[j] = v[j] != 0; break;
        case DType::kUInt8: static_cast<uint8_t*>(p)[j] = static_cast<uint8_t>(static_cast<int64_t>(v[j])); break;
        case DType::kInt8: static_cast<int8_t*>(p)[j] = static_cast<int8_t>(static_cast<int64_t>(v[j])); break;
        case DType::kUInt16: static_cast<uint16_t*>(p)[j] = static_cast<uint16_t>(static_cast<int64_t>(v[j])); break;
        case DType::kInt16: static_cast<int16_t*>(p)[j] = static_cast<int16_t>(static_cast<int64_t>(v[j])); break;
        case DType::kInt32: static_cast<int32_t*>(p)[j] = static_cast<int32_t>(static_cast<int64_t>(v[j])); break;
        case DType::kInt64: static_cast<int64_t*>(p)[j] = static_cast<int64_t>(v[j]); break;
        case DType::kFloat16: static_cast<uint16_t*>(p)[j] = FloatToHalfBits(static_cast<float>(v[j])); break;
        case DType::kBFloat16: static_cast<uint16_t*>(p)[j] = FloatToBFloat16Bits(static_cast<float>(v[j])); break;
        case DType::kFloat32: static_cast<float*>(p)[j] = static_cast<float>(v[j]); break;
        case DType::kFloat64: static_cast<double*>(p)[j] = v[j]; break;
      }
    }
  }
  return list;
}

// Fresh random samples of any dtype (empty samples allowed): uint8 over 0..255, bool 0/1, the
// other integers over [lo, hi) scaled to use their range (int16, int32, int64 by 100, 1e4, 1e6;
// uint16 by 1000 around 0), floats over [lo, hi) (half types rounded).
inline TensorListCPU RandomTyped(const std::vector<Shape>& shapes, DType dtype, Layout layout = {}, double lo = -50,
                                 double hi = 50) {
  std::vector<std::vector<double>> values;
  for (const Shape& s : shapes) {
    std::vector<double> v = RandomVector<double>(static_cast<size_t>(s.num_elements()), lo, hi);
    for (double& x : v) {
      switch (dtype) {
        case DType::kBool: x = x > (lo + hi) / 2; break;
        case DType::kUInt8: x = std::floor((x - lo) / (hi - lo) * 256); break;
        case DType::kInt8: x = std::floor(x); break;
        case DType::kUInt16: x = std::floor(std::abs(x) * 1000); break;
        case DType::kInt16: x = std::floor(x * 100); break;
        case DType::kInt32: x = std::floor(x * 1e4); break;
        case DType::kInt64: x = std::floor(x * 1e6); break;
        default: break;
      }
    }
    values.push_back(std::move(v));
  }
  return TypedBatch(shapes, dtype, values, std::move(layout));
}

// Runs `spec` over `inputs` (any number) on `device`; returns output 0 on the host.
inline TensorListCPU RunMulti(OpSpec spec, Device device, const std::vector<TensorListCPU>& inputs,
                              const ArgInputs& args = {}) {
  const bool gpu = device == Device::kGpu;
  spec.set_device(gpu ? DeviceRequest::kGpu : DeviceRequest::kCpu);
  std::unique_ptr<Operator> op = OpRegistry::Global().Get(spec.op()).factory(spec);
  Workspace ws(spec, inputs.empty() ? 0 : inputs[0].num_samples());
  TbbThreadPool pool(2);
  ws.set_thread_pool(&pool);
  for (const auto& [name, values] : args) ws.SetArgInput(name, values);
  std::optional<cuda::Stream> stream;
  std::vector<TensorListGPU> device_inputs(inputs.size());
  if (gpu) {
    stream = cuda::Stream::Create();
    ws.set_stream(stream->view());
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!gpu) {
      ws.AddInput(inputs[k]);
      continue;
    }
    CopyAsync(device_inputs[k], inputs[k], stream->view());
    device_inputs[k].set_layout(inputs[k].layout());
    ws.AddInput(device_inputs[k]);
  }
  const OutputDescs descs = op->Setup(ws);
  TensorListCPU host;
  if (!gpu) {
    host.Resize(descs[0].shapes, descs[0].dtype);
    host.set_layout(descs[0].layout);
    if (host.nbytes() > 0) std::memset(host.buffer().host_ptr(), OpHarness::kPoison, host.nbytes());
    ws.AddOutput(host);
    op->RunCpu(ws);
    return host;
  }
  TensorListGPU out;
  out.Resize(descs[0].shapes, descs[0].dtype, stream->view());
  out.set_layout(descs[0].layout);
  if (out.nbytes() > 0) {
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(out.buffer().device_ptr(), OpHarness::kPoison, out.nbytes(), stream->get()));
  }
  ws.AddOutput(out);
  op->PrepareGpu(ws);
  op->RunGpu(ws);
  CopyAsync(host, out, stream->view());
  stream->Synchronize();
  host.set_layout(out.layout());
  return host;
}

inline std::string RunMultiError(const OpSpec& spec, const std::vector<TensorListCPU>& inputs, const ArgInputs& args = {}) {
  return ErrorText([&] { RunMulti(spec, Device::kCpu, inputs, args); });
}

// The error text of constructing the operator of `spec` (validated as the harness does).
inline std::string ConstructError(const OpSpec& spec) {
  return ErrorText([&] { OpHarness h(spec, Device::kCpu); });
}

}  // namespace conveyor::testing
