// The C API's external-source functions (conveyor_pipeline.h): feeding a batch or samples, host or
// device, in place when the memory allows, else copied (device copies on the handle's feed stream).
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/capi/capi_internal.h"
#include "core/capi/conveyor.h"
#include "core/capi/pipeline_capi_internal.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/interop/any_tensor.h"
#include "core/pipeline/pipeline.h"
#include "core/util/strings.h"

namespace conveyor::capi {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ", ") + n;
  return joined.empty() ? "none" : joined;
}

const OpSpec& ExternalSource(const conveyor_pipeline_s& p, const std::string& node) {
  const PipelineSpec& spec = p.pipeline.spec();
  std::vector<std::string> names;
  for (const OpSpec& op : spec.ops) {
    if (op.name() != node) {
      names.push_back(op.name());
      continue;
    }
    if (op.op() != kExternalSourceOp) {
      throw InvalidArgument("node \"" + node + "\" of pipeline \"" + spec.name + "\" runs op \"" + op.op() +
                            "\"; only external_source nodes can be fed (external sources: " +
                            JoinNames(p.external_sources) + ")");
    }
    return op;
  }
  throw InvalidArgument("node: expected an external_source node of pipeline \"" + spec.name +
                        "\" (external sources: " + JoinNames(p.external_sources) + "), got \"" + node +
                        "\", which is no node of it" + DidYouMean(node, names));
}

namespace {

using interop::AnyTensor;

// Sample views of a batch tensor: t[0], t[1], ... (same Buffer and ready event).
std::vector<AnyTensor> SplitBatch(const AnyTensor& batch) {
  return interop::Visit(batch, [](const auto& t) {
    if (t.ndim() < 1) {
      throw InvalidArgument("batch: expected a tensor of at least 1 dimension whose first is the batch, got shape " +
                            t.shape().ToString());
    }
    using T = std::decay_t<decltype(t)>;
    std::vector<AnyTensor> samples;
    const Shape shape(t.shape().begin() + 1, t.shape().end());
    const Shape strides(t.strides().begin() + 1, t.strides().end());
    const int64_t step = t.strides()[0] * static_cast<int64_t>(DTypeSize(t.dtype()));
    for (int64_t i = 0; i < t.shape()[0]; ++i) {
      T s = T::FromBuffer(t.buffer(), t.byte_offset() + i * step, shape, t.dtype(), strides, {}, t.read_only());
      s.set_ready_event(t.ready_event());
      samples.emplace_back(std::move(s));
    }
    return samples;
  });
}

// Copies a strided host tensor into contiguous memory at `dst`.
void CopyToContiguous(char* dst, const TensorCPU& src) {
  const int64_t n = src.num_elements();
  if (n == 0) return;
  const size_t itemsize = DTypeSize(src.dtype());
  const char* base = static_cast<const char*>(src.raw_data());
  if (src.is_contiguous()) {
    std::memcpy(dst, base, static_cast<size_t>(n) * itemsize);
    return;
  }
  const int ndim = src.ndim();
  std::vector<int64_t> index(static_cast<size_t>(ndim), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (int d = 0; d < ndim; ++d) offset += index[d] * src.strides()[d];
    std::memcpy(dst + static_cast<size_t>(e) * itemsize, base + offset * static_cast<int64_t>(itemsize), itemsize);
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[d] < src.shape()[d]) break;
      index[d] = 0;
    }
  }
}

constexpr size_t kSampleAlignment = 16;  // TensorList's sample alignment

// Zero-copy: a contiguous batch whose samples already sit where a TensorList puts them.
template <typename Backend>
std::optional<TensorList<Backend>> InPlace(const Tensor<Backend>& t) {
  const size_t sample_bytes = t.shape()[0] == 0 ? 0 : t.nbytes() / static_cast<size_t>(t.shape()[0]);
  if (!t.is_contiguous() || sample_bytes % kSampleAlignment != 0) return std::nullopt;
  std::vector<Shape> shapes(static_cast<size_t>(t.shape()[0]), Shape(t.shape().begin() + 1, t.shape().end()));
  char* first = t.buffer().empty() ? nullptr : static_cast<char*>(t.buffer().data()) + t.byte_offset();
  TensorList<Backend> list;
  list.SetBuffer(Buffer::Wrap(first, t.nbytes(), t.memory_kind(), t.device(), std::make_shared<Buffer>(t.buffer())),
                 shapes, t.dtype());
  list.set_ready_event(t.ready_event());
  return list;
}

TensorListCPU CopyHost(const std::vector<AnyTensor>& samples, DType dtype) {
  std::vector<Shape> shapes;
  for (const AnyTensor& s : samples) shapes.push_back(std::get<TensorCPU>(s).shape());
  TensorListCPU list;
  list.Resize(shapes, dtype);
  for (size_t i = 0; i < samples.size(); ++i) {
    const TensorCPU& s = std::get<TensorCPU>(samples[i]);
    // Pinned memory may still be written by the device: the host reads it only after that.
    if (s.ready_event()) s.ready_event()->Synchronize();
    CopyToContiguous(static_cast<char*>(list.raw_sample(static_cast<int>(i))), s);
  }
  return list;
}

TensorListGPU CopyDevice(conveyor_pipeline_s& p, const std::vector<AnyTensor>& samples, DType dtype, int device) {
  cuda::DeviceGuard guard(device);
  if (!p.feed_stream) p.feed_stream = cuda::Stream::Create();
  const StreamView stream = p.feed_stream->view();
  std::vector<Shape> shapes;
  auto keep = std::make_shared<std::vector<Buffer>>();  // the sources, until the copies are done
  for (size_t i = 0; i < samples.size(); ++i) {
    const TensorGPU& s = std::get<TensorGPU>(samples[i]);
    if (!s.is_contiguous()) {
      throw InvalidArgument("sample " + std::to_string(i) + ": expected a contiguous device tensor, got shape " +
                            s.shape().ToString() + " with strides " + s.strides().ToString() +
                            " (make it contiguous first)");
    }
    shapes.push_back(s.shape());
    keep->push_back(s.buffer());
  }
  TensorListGPU list;
  list.Resize(shapes, dtype, stream, MemoryKind::kDevice);
  keep->push_back(list.buffer());
  // The fed batch owns its sources: the executor drops it only after the slot's GPU work, which
  // waited for these copies.
  const Buffer& b = list.buffer();
  list.SetBuffer(Buffer::Wrap(b.data(), b.size(), MemoryKind::kDevice, device, keep), shapes, dtype);
  for (size_t i = 0; i < samples.size(); ++i) {
    const TensorGPU& s = std::get<TensorGPU>(samples[i]);
    if (s.nbytes() == 0) continue;
    s.WaitReady(stream);
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(list.raw_sample(static_cast<int>(i)), s.raw_data(), s.nbytes(),
                                        cudaMemcpyDefault, stream.get()));
  }
  list.RecordReady(stream);
  return list;
}

// Feeds `samples` (all host or all device, one dtype), or `batch` in place when possible.
void Feed(conveyor_pipeline_s& p, const char* node_name, const std::vector<AnyTensor>& samples,
          const AnyTensor* batch) {
  const std::string node = Require(node_name, "node");
  const OpSpec& spec = ExternalSource(p, node);
  const std::string where = "node \"" + node + "\": ";
  const bool gpu = batch != nullptr ? interop::IsGpu(*batch) : (!samples.empty() && interop::IsGpu(samples[0]));
  DType dtype = spec.Arg<DType>("dtype");
  if (batch != nullptr) dtype = interop::Visit(*batch, [](const auto& t) { return t.dtype(); });
  for (size_t i = 0; i < samples.size(); ++i) {
    const DType d = interop::Visit(samples[i], [](const auto& t) { return t.dtype(); });
    if (interop::IsGpu(samples[i]) != gpu) {
      throw InvalidArgument(where + "expected every sample on the " + std::string(gpu ? "device" : "host") +
                            " like sample 0, got sample " + std::to_string(i) + " on the " +
                            (gpu ? "host" : "device"));
    }
    if (i == 0 && batch == nullptr) dtype = d;
    if (d != dtype) {
      throw InvalidArgument(where + "expected every sample of dtype " + std::string(DTypeName(dtype)) +
                            ", got sample " + std::to_string(i) + " of dtype " + std::string(DTypeName(d)));
    }
  }
  const bool built = p.pipeline.built();
  const bool cpu_node = built ? p.pipeline.graph().node(node).device == Device::kCpu
                              : spec.device() == DeviceRequest::kCpu;
  if (gpu && cpu_node) {
    throw InvalidArgument(where + "runs on the CPU: expected host data (CPU or pinned memory), got device memory");
  }
  if (gpu) {
    const int device = p.pipeline.spec().device_id;
    for (size_t i = 0; i < samples.size(); ++i) {
      const int have = std::get<TensorGPU>(samples[i]).device();
      if (have >= 0 && have != device) {
        throw InvalidArgument(where + "expected device data on the pipeline's device_id " + std::to_string(device) +
                              ", got sample " + std::to_string(i) + " on device " + std::to_string(have));
      }
    }
    std::optional<TensorListGPU> list;
    if (batch != nullptr) list = InPlace(std::get<TensorGPU>(*batch));
    if (!list) list = CopyDevice(p, samples, dtype, device);
    p.pipeline.Feed(node, std::move(*list));
  } else {
    std::optional<TensorListCPU> list;
    if (batch != nullptr) list = InPlace(std::get<TensorCPU>(*batch));
    if (!list) list = CopyHost(samples, dtype);
    p.pipeline.Feed(node, std::move(*list));
  }
}

}  // namespace
}  // namespace conveyor::capi

using namespace conveyor;        // NOLINT: the C functions below are thin shims
using namespace conveyor::capi;  // NOLINT

extern "C" {

conveyor_status_t conveyor_pipeline_external_source_count(conveyor_pipeline_t pipeline, int32_t* out) {
  return Guard(__func__, [&] {
    *Require(out, "out") = static_cast<int32_t>(Require(pipeline, "pipeline")->external_sources.size());
  });
}

conveyor_status_t conveyor_pipeline_external_source_name(conveyor_pipeline_t pipeline, int32_t index,
                                                         const char** out) {
  return Guard(__func__, [&] {
    const auto& names = Require(pipeline, "pipeline")->external_sources;
    Require(out, "out");
    if (index < 0 || static_cast<size_t>(index) >= names.size()) {
      throw InvalidArgument("index: expected 0 to " + std::to_string(static_cast<int>(names.size()) - 1) +
                            " (external sources: " + JoinNames(names) + "), got " + std::to_string(index));
    }
    *out = names[static_cast<size_t>(index)].c_str();
  });
}

conveyor_status_t conveyor_pipeline_feed_batch(conveyor_pipeline_t pipeline, const char* node,
                                               conveyor_tensor_t batch) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(batch, "batch");
    Feed(*pipeline, node, SplitBatch(batch->tensor), &batch->tensor);
  });
}

conveyor_status_t conveyor_pipeline_feed_samples(conveyor_pipeline_t pipeline, const char* node,
                                                 const conveyor_tensor_t* samples, int32_t count) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    if (count < 0) throw InvalidArgument("count: expected >= 0, got " + std::to_string(count));
    if (count > 0) Require(samples, "samples");
    std::vector<interop::AnyTensor> list;
    for (int32_t i = 0; i < count; ++i) {
      if (samples[i] == nullptr) {
        throw InvalidArgument("samples[" + std::to_string(i) + "]: expected a tensor handle, got NULL");
      }
      list.push_back(samples[i]->tensor);
    }
    Feed(*pipeline, node, list, nullptr);
  });
}

}  // extern "C"
