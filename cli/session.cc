#include "cli/session.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/overrides.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/pipeline/yaml_loader.h"
#include "core/tensor/copy.h"
#include "core/util/strings.h"

namespace conveyor::cli {

namespace {

// preview --inputs: a node output joins the pipeline's outputs for this run.
void AddExtraOutput(PipelineSpec& spec, const PipelineCommand& cmd) {
  const std::string& name = cmd.extra_output;
  if (name.empty() || std::find(spec.outputs.begin(), spec.outputs.end(), name) != spec.outputs.end()) return;
  std::vector<std::string> produced;
  for (const OpSpec& op : spec.ops) produced.insert(produced.end(), op.outputs().begin(), op.outputs().end());
  if (std::find(produced.begin(), produced.end(), name) == produced.end()) {
    throw ConfigError("--inputs " + name + ": no node of " + cmd.path + " outputs \"" + name + "\"" +
                      DidYouMean(name, produced) + " (node outputs: " + Join(produced, ", ") + ")");
  }
  spec.outputs.push_back(name);
}

// One --feed per external_source node, and none for anything else.
std::vector<std::pair<FeedSpec, OpSpec>> MatchFeeds(const PipelineSpec& spec, const PipelineCommand& cmd) {
  std::vector<FeedSpec> given;
  std::vector<std::string> sources;
  for (const OpSpec& op : spec.ops) {
    if (op.op() == kExternalSourceOp) sources.push_back(op.name());
  }
  for (const std::string& text : cmd.feeds) {
    FeedSpec f = ParseFeed(text);
    if (std::find(sources.begin(), sources.end(), f.node) == sources.end()) {
      throw ConfigError("--feed " + f.text + ": the pipeline has no external_source node \"" + f.node + "\"" +
                        DidYouMean(f.node, sources) +
                        (sources.empty() ? " (it has none)" : " (external_source nodes: " + Join(sources, ", ") + ")"));
    }
    for (const FeedSpec& earlier : given) {
      if (earlier.node == f.node) throw ConfigError("--feed " + f.text + ": node \"" + f.node + "\" is fed twice");
    }
    given.push_back(std::move(f));
  }
  std::vector<std::pair<FeedSpec, OpSpec>> feeds;
  for (const OpSpec& op : spec.ops) {
    if (op.op() != kExternalSourceOp) continue;
    const auto it = std::find_if(given.begin(), given.end(), [&](const FeedSpec& f) { return f.node == op.name(); });
    if (it == given.end()) {
      const SourceLocation at = op.Location("op");
      throw ConfigError((at.empty() ? cmd.path : at.ToString()) + ": " + op.Describe() +
                        ": an external_source node needs data from the application; the CLI feeds random batches "
                        "of a shape you declare: --feed " + op.name() + "=SHAPE (e.g. --feed " + op.name() +
                        "=200-480x200-640x3: LO-HI drawn per sample); from C++ Pipeline::Feed, from Python "
                        "conveyor.Pipeline.feed");
    }
    CheckFeed(*it, op);
    feeds.emplace_back(*it, op);
  }
  return feeds;
}

}  // namespace

std::string ReadCheckpointFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the checkpoint file (--resume)");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteCheckpointFile(const std::string& path, const std::string& checkpoint) {
  // Written beside and renamed over: a run killed while writing leaves the previous checkpoint.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << checkpoint;
    if (!out.flush()) throw ConfigError(tmp + ": cannot write the checkpoint file (--checkpoint)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw ConfigError(path + ": cannot replace the checkpoint file: " + std::strerror(errno));
  }
}

Session Session::Open(const PipelineCommand& cmd) {
  PipelineSpec spec = LoadPipelineFile(cmd.path);
  if (!cmd.device.empty()) ApplyOverride(spec, "pipeline.device=" + cmd.device);
  if (cmd.batch_size > 0) spec.batch_size = cmd.batch_size;
  ApplyOverrides(spec, cmd.sets);
  AddExtraOutput(spec, cmd);
  Session s;
  s.feeds_ = MatchFeeds(spec, cmd);
  s.pipeline_ = std::make_unique<Pipeline>(std::move(spec));
  // Build() primes as many iterations as have been fed (up to prefetch_depth).
  s.scheduled_ = std::max(1, s.pipeline_->spec().prefetch_depth);
  for (int64_t k = 0; k < s.scheduled_ && !s.feeds_.empty(); ++k) s.FeedIteration(k);
  if (!cmd.resume.empty()) s.pipeline_->ResumeFrom(ReadCheckpointFile(cmd.resume));
  s.pipeline_->Build();
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
    FeedIteration(scheduled_);
    pipeline_->Run();
    ++scheduled_;
  }
  return out;
}

void Session::FeedIteration(int64_t iteration) {
  const PipelineSpec& spec = pipeline_->spec();
  for (const auto& [feed, node] : feeds_) {
    pipeline_->Feed(node.name(), MakeFeedBatch(feed, node, spec.batch_size, spec.seed, iteration));
  }
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
