#include "core/capi/pad_batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <cuda_runtime_api.h>

#include "core/capi/padded_outputs.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/error.h"
#include "core/tensor/half.h"

namespace conveyor::capi {
namespace {

template <typename T>
uint64_t IntPattern(double value, DType dtype) {
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (!(value >= lo && value <= hi)) {
    throw InvalidArgument("pad_value: expected a value that " + std::string(DTypeName(dtype)) + " holds, got " +
                          std::to_string(value));
  }
  const T v = static_cast<T>(value);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <typename T>
uint64_t Bits(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

void CheckSamples(const Shape& first, const Shape& other, int i) {
  if (other.ndim() != first.ndim()) {
    throw InvalidArgument("expected samples of one rank to pad, got sample 0 of shape " + first.ToString() +
                          " and sample " + std::to_string(i) + " of shape " + other.ToString());
  }
}

template <typename Backend>
std::vector<PadSample> Samples(const TensorList<Backend>& list, Shape& padded) {
  std::vector<Shape> shapes;
  std::vector<PadSample> samples(static_cast<size_t>(list.num_samples()));
  for (int i = 0; i < list.num_samples(); ++i) {
    const Shape& s = list.shape(i);
    if (i > 0) CheckSamples(list.shape(0), s, i);
    if (s.ndim() >= kMaxPadDims) {
      throw InvalidArgument("expected samples of at most " + std::to_string(kMaxPadDims - 1) +
                            " dimensions to pad, got shape " + s.ToString());
    }
    samples[static_cast<size_t>(i)].offset = list.offset(i);
    for (int d = 0; d < s.ndim(); ++d) samples[static_cast<size_t>(i)].shape[d] = s[d];
    shapes.push_back(s);
  }
  padded = PaddedShape(shapes);
  return samples;
}

TensorCPU HostInt64(Shape shape) {
  const size_t bytes = std::max<size_t>(16, sizeof(int64_t) * static_cast<size_t>(shape.num_elements()));
  return TensorCPU::FromBuffer(Buffer::Allocate(MemoryKind::kHost, bytes), 0, shape, DType::kInt64);
}

template <typename Backend>
TensorCPU Lengths(const TensorList<Backend>& list) {
  TensorCPU t = HostInt64(Shape{list.num_samples()});
  auto* out = static_cast<int64_t*>(t.raw_mutable_data());
  for (int i = 0; i < list.num_samples(); ++i) out[i] = list.shape(i).ndim() > 0 ? list.shape(i)[0] : 1;
  return t;
}

template <typename Backend>
TensorCPU Shapes(const TensorList<Backend>& list) {
  const int n = list.num_samples();
  const int ndim = n > 0 ? list.shape(0).ndim() : 0;
  TensorCPU t = HostInt64(Shape{n, ndim});
  auto* out = static_cast<int64_t*>(t.raw_mutable_data());
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < ndim; ++d) out[i * ndim + d] = list.shape(i)[d];
  }
  return t;
}

}  // namespace

uint64_t PadPattern(double value, DType dtype) {
  switch (dtype) {
    case DType::kBool: return value != 0 ? 1 : 0;
    case DType::kUInt8: return IntPattern<uint8_t>(value, dtype);
    case DType::kInt8: return IntPattern<int8_t>(value, dtype);
    case DType::kUInt16: return IntPattern<uint16_t>(value, dtype);
    case DType::kInt16: return IntPattern<int16_t>(value, dtype);
    case DType::kInt32: return IntPattern<int32_t>(value, dtype);
    case DType::kInt64: return IntPattern<int64_t>(value, dtype);
    case DType::kFloat16: return FloatToHalfBits(static_cast<float>(value));
    case DType::kBFloat16: return FloatToBFloat16Bits(static_cast<float>(value));
    case DType::kFloat32: return Bits(static_cast<float>(value));
    case DType::kFloat64: return Bits(value);
  }
  throw InvalidArgument("pad_value: unknown dtype");
}

Shape PaddedShape(const std::vector<Shape>& shapes) {
  std::vector<int64_t> dims{static_cast<int64_t>(shapes.size())};
  if (!shapes.empty()) dims.resize(static_cast<size_t>(shapes[0].ndim()) + 1, 0);
  for (const Shape& s : shapes) {
    for (int d = 0; d < s.ndim(); ++d) dims[static_cast<size_t>(d) + 1] = std::max(dims[static_cast<size_t>(d) + 1], s[d]);
  }
  return Shape(dims.begin(), dims.end());
}

void PadBatchCpu(void* out, const void* base, const std::vector<PadSample>& samples, const Shape& padded,
                 size_t itemsize, uint64_t pattern) {
  const int ndim = padded.ndim() - 1;
  int64_t per_sample = 1;
  for (int d = 0; d < ndim; ++d) per_sample *= padded[d + 1];
  char* dst = static_cast<char*>(out);
  // The pattern first, then each sample's rows (runs along its last dimension) over it.
  for (int64_t e = 0; e < padded.num_elements(); ++e) std::memcpy(dst + e * itemsize, &pattern, itemsize);
  for (size_t b = 0; b < samples.size(); ++b) {
    const PadSample& s = samples[b];
    const int64_t run = ndim > 0 ? s.shape[ndim - 1] : 1;
    int64_t rows = 1;
    for (int d = 0; d + 1 < ndim; ++d) rows *= s.shape[d];
    if (run == 0 || rows == 0) continue;
    const char* src = static_cast<const char*>(base) + s.offset;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = 0, rest = r, stride = ndim > 0 ? padded[ndim] : 1;
      for (int d = ndim - 2; d >= 0; --d) {
        at += (rest % s.shape[d]) * stride;
        rest /= s.shape[d];
        stride *= padded[d + 1];
      }
      std::memcpy(dst + (static_cast<int64_t>(b) * per_sample + at) * static_cast<int64_t>(itemsize),
                  src + r * run * static_cast<int64_t>(itemsize), static_cast<size_t>(run) * itemsize);
    }
  }
}

PaddedBatch PadList(const TensorListCPU& list, double pad_value) {
  Shape padded;
  const std::vector<PadSample> samples = Samples(list, padded);
  const size_t itemsize = DTypeSize(list.dtype());
  const uint64_t pattern = PadPattern(pad_value, list.dtype());
  const size_t bytes = static_cast<size_t>(padded.num_elements()) * itemsize;
  // Pinned outputs are read by the host too (their mapped pointer is a host address).
  Buffer out = Buffer::Allocate(MemoryKind::kHost, bytes);
  if (list.ready_event()) list.ready_event()->Synchronize();  // a GPU node's host output
  PadBatchCpu(out.data(), list.buffer().data(), samples, padded, itemsize, pattern);
  return {TensorCPU::FromBuffer(std::move(out), 0, padded, list.dtype()), Lengths(list), Shapes(list)};
}

PaddedBatch PadList(const TensorListGPU& list, double pad_value, StreamView stream) {
  Shape padded;
  const std::vector<PadSample> samples = Samples(list, padded);
  const size_t itemsize = DTypeSize(list.dtype());
  const uint64_t pattern = PadPattern(pad_value, list.dtype());
  const int device = list.buffer().device() >= 0 ? list.buffer().device() : cuda::CurrentDevice();
  cuda::DeviceGuard guard(device);
  // One allocation: the padded data, then the sample table the kernel reads (so the table lives
  // as long as the data, past the kernel).
  const size_t data_bytes = (static_cast<size_t>(padded.num_elements()) * itemsize + 15) / 16 * 16;
  const size_t table_bytes = samples.size() * sizeof(PadSample);
  Buffer out = Buffer::Allocate(MemoryKind::kDevice, data_bytes + table_bytes, stream, device);
  char* base = static_cast<char*>(out.data());
  if (table_bytes > 0) {
    // From pageable memory: the call returns once `samples` has been staged.
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(base + data_bytes, samples.data(), table_bytes, cudaMemcpyHostToDevice,
                                        stream.get()));
  }
  list.WaitReady(stream);
  PadBatchGpu(base, list.buffer().data(), reinterpret_cast<const PadSample*>(base + data_bytes), padded, itemsize,
              pattern, stream);
  TensorGPU t = TensorGPU::FromBuffer(std::move(out), 0, padded, list.dtype());
  t.RecordReady(stream);
  return {std::move(t), Lengths(list), Shapes(list)};
}

}  // namespace conveyor::capi
