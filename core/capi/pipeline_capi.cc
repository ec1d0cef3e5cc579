// The C API's pipeline functions (conveyor_pipeline.h) over conveyor::Pipeline: life cycle,
// checkpoints, counters and outputs (external sources: pipeline_capi_feed.cc).
//
// Outputs are zero-copy: every tensor handed out wraps the slot's memory in a Buffer whose owner
// is the shared OutputsLease, so the slot returns to the ring only when the outputs handle and
// every tensor and DLPack export of it are gone (see the header's lifetime rules).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/capi/capi_internal.h"
#include "core/capi/conveyor.h"
#include "core/capi/padded_outputs.h"
#include "core/capi/pipeline_capi_internal.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/interop/any_tensor.h"
#include "core/pipeline/pipeline.h"
#include "core/util/strings.h"

namespace conveyor::capi {
namespace {

// One iteration's outputs, shared by the outputs handle and by every Buffer handed out from it.
// (Made from a popped PipelineOutputs: its default constructor needs SlotLease complete.)
struct OutputsLease {
  explicit OutputsLease(PipelineOutputs o) : outputs(std::move(o)) {}
  std::mutex mu;  // WaitOn may come from exports on several threads
  PipelineOutputs outputs;
};

}  // namespace
}  // namespace conveyor::capi

struct conveyor_outputs_s {
  std::shared_ptr<conveyor::capi::OutputsLease> lease;
};

namespace conveyor::capi {
namespace {

using interop::AnyTensor;

conveyor_pipeline_t NewPipeline(Pipeline p) {
  auto handle = std::make_unique<conveyor_pipeline_s>(std::move(p));
  for (const OpSpec& op : handle->pipeline.spec().ops) {
    if (op.op() == kExternalSourceOp) handle->external_sources.push_back(op.name());
  }
  return handle.release();
}

int32_t CheckIndex(const PipelineOutputs& o, int32_t index) {
  if (index < 0 || index >= o.size()) {
    throw InvalidArgument("index: expected 0 to " + std::to_string(o.size() - 1) + " (outputs: " +
                          JoinNames(o.names()) + "), got " + std::to_string(index));
  }
  return index;
}

template <typename F>
decltype(auto) VisitList(const PipelineOutputs& o, int32_t index, F&& f) {
  return o.IsGpu(index) ? f(o.Gpu(index)) : f(o.Cpu(index));
}

// A zero-copy tensor of sample `sample` (-1: the uniform batch) whose Buffer keeps `lease` alive.
template <typename Backend>
Tensor<Backend> OutputTensor(const TensorList<Backend>& list, const std::string& name, int32_t sample,
                             const std::shared_ptr<OutputsLease>& lease) {
  const int n = list.num_samples();
  if (sample < -1 || sample >= n) {
    throw InvalidArgument("sample: expected -1 (the whole batch) or 0 to " + std::to_string(n - 1) + " for output \"" +
                          name + "\" of " + std::to_string(n) + " samples, got " + std::to_string(sample));
  }
  const Buffer& b = list.buffer();
  Buffer held = Buffer::Wrap(b.data(), b.size(), b.kind(), b.device(), std::shared_ptr<void>(lease));
  Tensor<Backend> t;
  if (sample >= 0) {
    t = Tensor<Backend>::FromBuffer(std::move(held), list.offset(sample), list.shape(sample), list.dtype(), {},
                                    list.layout());
  } else if (n == 0) {
    t = Tensor<Backend>::FromBuffer(std::move(held), 0, Shape{0}, list.dtype());
  } else {
    if (!list.is_uniform()) {
      int other = 1;
      while (list.shape(other) == list.shape(0)) ++other;
      throw InvalidArgument("sample -1: expected output \"" + name +
                            "\" to be a uniform batch, got sample 0 of shape " + list.shape(0).ToString() +
                            " and sample " + std::to_string(other) + " of shape " + list.shape(other).ToString() +
                            "; take its samples one by one (0 to " + std::to_string(n - 1) + ")");
    }
    const Shape& sample_shape = list.shape(0);
    const int64_t itemsize = static_cast<int64_t>(DTypeSize(list.dtype()));
    // Samples start 16-byte aligned, so the batch stride may exceed a sample's elements.
    const int64_t batch_stride = n > 1 ? (list.offset(1) - list.offset(0)) / itemsize : sample_shape.num_elements();
    std::vector<int64_t> dims{n}, strides{batch_stride};
    const Shape inner = RowMajorStrides(sample_shape);
    for (int d = 0; d < sample_shape.ndim(); ++d) {
      dims.push_back(sample_shape[d]);
      strides.push_back(inner[d]);
    }
    t = Tensor<Backend>::FromBuffer(std::move(held), list.offset(0), Shape(dims.begin(), dims.end()), list.dtype(),
                                    Shape(strides.begin(), strides.end()));
  }
  t.set_ready_event(list.ready_event());
  return t;
}

}  // namespace
}  // namespace conveyor::capi

using namespace conveyor;        // NOLINT: the C functions below are thin shims
using namespace conveyor::capi;  // NOLINT

extern "C" {

conveyor_status_t conveyor_pipeline_create_from_file(const char* path, conveyor_pipeline_t* out) {
  return Guard(__func__, [&] {
    Require(path, "path");
    Require(out, "out");
    *out = NewPipeline(Pipeline::FromFile(path));
  });
}

conveyor_status_t conveyor_pipeline_create_from_string(const char* yaml, const char* base_dir,
                                                       conveyor_pipeline_t* out) {
  return Guard(__func__, [&] {
    Require(yaml, "yaml");
    Require(out, "out");
    *out = NewPipeline(Pipeline::FromYaml(yaml, base_dir != nullptr ? base_dir : ""));
  });
}

void conveyor_pipeline_destroy(conveyor_pipeline_t pipeline) {
  try {
    delete pipeline;
  } catch (...) {
    // Shutdown is documented not to throw; nothing may cross the boundary if it ever did.
  }
}

conveyor_status_t conveyor_pipeline_build(conveyor_pipeline_t pipeline) {
  return Guard(__func__, [&] { Require(pipeline, "pipeline")->pipeline.Build(); });
}

conveyor_status_t conveyor_pipeline_run(conveyor_pipeline_t pipeline) {
  return Guard(__func__, [&] { Require(pipeline, "pipeline")->pipeline.Run(); });
}

conveyor_status_t conveyor_pipeline_epoch_size(conveyor_pipeline_t pipeline, const char* reader, int64_t* out) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(reader, "reader");
    Require(out, "out");
    *out = pipeline->pipeline.EpochSize(reader);
  });
}

conveyor_status_t conveyor_pipeline_checkpoint(conveyor_pipeline_t pipeline, char* buffer, size_t capacity,
                                               size_t* size) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(size, "size");
    const std::string state = pipeline->pipeline.Checkpoint();
    *size = state.size();
    if (capacity == 0) return;
    Require(buffer, "buffer");
    if (capacity < state.size()) {
      throw InvalidArgument("buffer of " + std::to_string(capacity) + " bytes, the checkpoint needs " +
                            std::to_string(state.size()) + " (call with capacity 0 for the size)");
    }
    std::memcpy(buffer, state.data(), state.size());
    if (capacity > state.size()) buffer[state.size()] = '\0';
  });
}

conveyor_status_t conveyor_pipeline_stage_times(conveyor_pipeline_t pipeline, int64_t* iterations, int64_t ns[4]) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(iterations, "iterations");
    Require(ns, "ns");
    const ExecutorCounters c = pipeline->pipeline.counters();
    *iterations = c.iterations;
    ns[0] = c.stage_cpu_ns;
    ns[1] = c.stage_issue_ns;
    ns[2] = c.stage_gpu_wait_ns;
    ns[3] = c.stage_idle_ns;
  });
}

conveyor_status_t conveyor_pipeline_skipped(conveyor_pipeline_t pipeline, int64_t* count, char* buffer,
                                            size_t capacity, size_t* size) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(size, "size");
    const ExecutorCounters c = pipeline->pipeline.counters();
    const auto field = [](std::string text) {
      for (char& ch : text) {
        if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
      }
      return text;
    };
    std::string text;
    for (const ExecutorCounters::SkippedFile& f : c.skipped_files) {
      text += field(f.node) + "\t" + field(f.file) + "\t" + std::to_string(f.times) + "\t" + field(f.reason) + "\n";
    }
    if (count != nullptr) *count = c.skipped_samples;
    *size = text.size();
    if (capacity == 0) return;
    Require(buffer, "buffer");
    if (capacity < text.size()) {
      throw InvalidArgument("buffer of " + std::to_string(capacity) + " bytes, the list needs " +
                            std::to_string(text.size()) + " (call with capacity 0 for the size)");
    }
    std::memcpy(buffer, text.data(), text.size());
    if (capacity > text.size()) buffer[text.size()] = '\0';
  });
}

conveyor_status_t conveyor_pipeline_resume_from(conveyor_pipeline_t pipeline, const char* data, size_t size) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(data, "data");
    pipeline->pipeline.ResumeFrom(std::string(data, size));
  });
}

conveyor_status_t conveyor_pipeline_outputs(conveyor_pipeline_t pipeline, conveyor_outputs_t* out) {
  return Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(out, "out");
    auto lease = std::make_shared<OutputsLease>(pipeline->pipeline.Outputs());
    auto handle = std::make_unique<conveyor_outputs_s>();
    handle->lease = std::move(lease);
    *out = handle.release();
  });
}

conveyor_status_t conveyor_pipeline_next(conveyor_pipeline_t pipeline, int32_t capacity, conveyor_tensor_t* tensors,
                                        conveyor_tensor_info_t* infos, int32_t* count, conveyor_outputs_t* outputs) {
  int32_t n = 0;
  conveyor_status_t status = Guard(__func__, [&] {
    Require(pipeline, "pipeline");
    Require(count, "count");
    *Require(outputs, "outputs") = nullptr;
    n = static_cast<int32_t>(pipeline->pipeline.output_names().size());
    if (capacity < n) {
      throw InvalidArgument("capacity: expected at least the pipeline's " + std::to_string(n) + " outputs, got " +
                            std::to_string(capacity));
    }
    if (n > 0) {
      Require(tensors, "tensors");
      Require(infos, "infos");
    }
  });
  if (status != CONVEYOR_OK) return status;
  // The steps are the public calls themselves, so errors carry the message of the step that failed.
  conveyor_outputs_t handle = nullptr;
  status = conveyor_pipeline_outputs(pipeline, &handle);
  if (status != CONVEYOR_OK) return status;
  bool all_uniform = true;
  int32_t made = 0;
  for (int32_t i = 0; i < n && status == CONVEYOR_OK; ++i) {
    tensors[i] = nullptr;
    infos[i] = conveyor_tensor_info_t{};
    int32_t uniform = 0;
    status = conveyor_outputs_is_uniform(handle, i, &uniform);
    if (status != CONVEYOR_OK) break;
    if (!uniform) {
      all_uniform = false;
      continue;
    }
    status = conveyor_outputs_get(handle, i, -1, &tensors[i]);
    if (status != CONVEYOR_OK) break;
    made = i + 1;
    status = conveyor_tensor_info(tensors[i], &infos[i]);
  }
  if (status == CONVEYOR_OK) status = conveyor_pipeline_run(pipeline);
  if (status != CONVEYOR_OK) {
    for (int32_t i = 0; i < made; ++i) {
      conveyor_tensor_release(tensors[i]);
      tensors[i] = nullptr;
    }
    conveyor_outputs_release(handle);
    return status;
  }
  *count = n;
  if (all_uniform) {
    conveyor_outputs_release(handle);
  } else {
    *outputs = handle;
  }
  return CONVEYOR_OK;
}

conveyor_status_t conveyor_outputs_count(conveyor_outputs_t outputs, int32_t* out) {
  return Guard(__func__, [&] { *Require(out, "out") = Require(outputs, "outputs")->lease->outputs.size(); });
}

conveyor_status_t conveyor_outputs_name(conveyor_outputs_t outputs, int32_t index, const char** out) {
  return Guard(__func__, [&] {
    const PipelineOutputs& o = Require(outputs, "outputs")->lease->outputs;
    Require(out, "out");
    *out = o.names()[static_cast<size_t>(CheckIndex(o, index))].c_str();
  });
}

conveyor_status_t conveyor_outputs_index(conveyor_outputs_t outputs, const char* name, int32_t* out) {
  return Guard(__func__, [&] {
    const PipelineOutputs& o = Require(outputs, "outputs")->lease->outputs;
    Require(name, "name");
    *Require(out, "out") = o.Index(name);
  });
}

conveyor_status_t conveyor_outputs_iteration(conveyor_outputs_t outputs, int64_t* out) {
  return Guard(__func__, [&] { *Require(out, "out") = Require(outputs, "outputs")->lease->outputs.iteration(); });
}

conveyor_status_t conveyor_outputs_num_samples(conveyor_outputs_t outputs, int32_t index, int32_t* out) {
  return Guard(__func__, [&] {
    const PipelineOutputs& o = Require(outputs, "outputs")->lease->outputs;
    Require(out, "out");
    *out = VisitList(o, CheckIndex(o, index), [](const auto& list) { return list.num_samples(); });
  });
}

conveyor_status_t conveyor_outputs_is_uniform(conveyor_outputs_t outputs, int32_t index, int32_t* out) {
  return Guard(__func__, [&] {
    const PipelineOutputs& o = Require(outputs, "outputs")->lease->outputs;
    Require(out, "out");
    *out = VisitList(o, CheckIndex(o, index), [](const auto& list) { return list.is_uniform() ? 1 : 0; });
  });
}

conveyor_status_t conveyor_outputs_get(conveyor_outputs_t outputs, int32_t index, int32_t sample,
                                       conveyor_tensor_t* out) {
  return Guard(__func__, [&] {
    const std::shared_ptr<OutputsLease>& lease = Require(outputs, "outputs")->lease;
    Require(out, "out");
    const PipelineOutputs& o = lease->outputs;
    const std::string& name = o.names()[static_cast<size_t>(CheckIndex(o, index))];
    interop::AnyTensor t = VisitList(o, index, [&](const auto& list) -> interop::AnyTensor {
      return OutputTensor(list, name, sample, lease);
    });
    std::unique_ptr<conveyor_tensor_s> handle(NewHandle(std::move(t)));
    handle->on_consumer_stream = [lease](StreamView stream) {
      std::lock_guard<std::mutex> lock(lease->mu);
      lease->outputs.WaitOn(stream);
    };
    *out = handle.release();
  });
}

conveyor_status_t conveyor_outputs_get_padded(conveyor_outputs_t outputs, int32_t index, double pad_value,
                                              int64_t stream, conveyor_tensor_t* data, conveyor_tensor_t* lengths,
                                              conveyor_tensor_t* shapes) {
  return Guard(__func__, [&] {
    const std::shared_ptr<OutputsLease>& lease = Require(outputs, "outputs")->lease;
    Require(data, "data");
    Require(lengths, "lengths");
    const PipelineOutputs& o = lease->outputs;
    const std::string& name = o.names()[static_cast<size_t>(CheckIndex(o, index))];
    PaddedBatch padded = [&] {
      try {
        if (!o.IsGpu(index)) return PadList(o.Cpu(index), pad_value);
        const std::optional<StreamView> s = cuda::DecodeInteropStream(stream);
        if (!s) throw InvalidArgument("stream: expected a stream for a GPU output, got -1 (none)");
        PaddedBatch p = PadList(o.Gpu(index), pad_value, *s);
        std::lock_guard<std::mutex> lock(lease->mu);
        lease->outputs.WaitOn(*s);  // the slot is rewritten only after the copy has read it
        return p;
      } catch (const InvalidArgument& e) {
        throw InvalidArgument("output \"" + name + "\": " + e.what());
      }
    }();
    std::unique_ptr<conveyor_tensor_s> d(NewHandle(std::move(padded.data)));
    std::unique_ptr<conveyor_tensor_s> l(NewHandle(std::move(padded.lengths)));
    std::unique_ptr<conveyor_tensor_s> sh(shapes != nullptr ? NewHandle(std::move(padded.shapes)) : nullptr);
    *data = d.release();
    *lengths = l.release();
    if (shapes != nullptr) *shapes = sh.release();
  });
}

conveyor_status_t conveyor_outputs_wait(conveyor_outputs_t outputs, int64_t stream) {
  return Guard(__func__, [&] {
    OutputsLease& lease = *Require(outputs, "outputs")->lease;
    const std::optional<StreamView> s = cuda::DecodeInteropStream(stream);
    std::lock_guard<std::mutex> lock(lease.mu);
    if (s) {
      lease.outputs.WaitOn(*s);
    } else {
      lease.outputs.Sync();
    }
  });
}

void conveyor_outputs_release(conveyor_outputs_t outputs) { delete outputs; }

}  // extern "C"
