#include "cli/session.h"

#include <algorithm>

#include "cli/overrides.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/pipeline/yaml_loader.h"
#include "core/tensor/copy.h"

namespace conveyor::cli {

Session Session::Open(const PipelineCommand& cmd) {
  PipelineSpec spec = LoadPipelineFile(cmd.path);
  if (!cmd.device.empty()) ApplyOverride(spec, "pipeline.device=" + cmd.device);
  if (cmd.batch_size > 0) spec.batch_size = cmd.batch_size;
  ApplyOverrides(spec, cmd.sets);
  for (const OpSpec& op : spec.ops) {
    if (op.op() == kExternalSourceOp) {
      const SourceLocation at = op.Location("op");
      throw ConfigError((at.empty() ? cmd.path : at.ToString()) + ": " + op.Describe() +
                        ": the conveyor CLI has no data to feed an external_source node; feed it from C++ "
                        "(Pipeline::Feed) or Python");
    }
  }
  Session s;
  s.pipeline_ = std::make_unique<Pipeline>(std::move(spec));
  s.pipeline_->Build();
  s.scheduled_ = std::max(1, s.pipeline_->spec().prefetch_depth);
  for (const GraphNode& node : s.pipeline_->graph().nodes()) {
    if (node.op().rfind("readers.", 0) == 0) {
      s.reader_ = node.name();
      break;
    }
  }
  if (!s.reader_.empty()) {
    const int64_t batch = s.pipeline_->spec().batch_size;
    s.epoch_samples_ = s.pipeline_->EpochSize(s.reader_);
    s.epoch_iterations_ = std::max<int64_t>(1, (s.epoch_samples_ + batch - 1) / batch);
  }
  return s;
}

PipelineOutputs Session::Next() {
  PipelineOutputs out = pipeline_->Outputs();
  if (scheduled_ < total_) {
    pipeline_->Run();
    ++scheduled_;
  }
  return out;
}

TensorListCPU OutputToHost(const PipelineOutputs& out, int i) {
  if (!out.IsGpu(i)) return out.Cpu(i);
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, out.Gpu(i), stream.view());
  stream.Synchronize();
  host.set_layout(out.Gpu(i).layout());
  return host;
}

int64_t OutputBytes(const PipelineOutputs& out) {
  int64_t bytes = 0;
  for (int i = 0; i < out.size(); ++i) {
    bytes += static_cast<int64_t>(out.IsGpu(i) ? out.Gpu(i).nbytes() : out.Cpu(i).nbytes());
  }
  return bytes;
}

}  // namespace conveyor::cli
