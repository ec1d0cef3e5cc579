// Session: a pipeline loaded for a CLI command — file, overrides, graph, executor — and the loop
// that pulls a given number of iterations from it.
//
//   Session s = Session::Open(cmd);   // ConfigError / PluginError / CudaError on a bad setup
//   s.SetIterations(n);               // how many Next() calls will come (no work is wasted)
//   for (...) { PipelineOutputs out = s.Next(); ... }
//
// external_source nodes get random batches of the shape `--feed NODE=SHAPE` declares (feed.h),
// one per scheduled iteration; a node without a --feed is a ConfigError that says how to give one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/feed.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::cli {

class Session {
 public:
  static Session Open(const PipelineCommand& cmd);

  Pipeline& pipeline() { return *pipeline_; }
  const PipelineSpec& spec() const { return pipeline_->spec(); }
  // The first reader node in file order ("" when none) and its iterations per epoch (0: none).
  const std::string& reader() const { return reader_; }
  int64_t epoch_iterations() const { return epoch_iterations_; }
  int64_t epoch_samples() const { return epoch_samples_; }

  // The total number of Next() calls the command will make; iterations beyond it are not
  // scheduled (only the prefetch priming may run ahead).
  void SetIterations(int64_t total) { total_ = total; }
  PipelineOutputs Next();

 private:
  // Feeds every external_source node its batch for iteration `iteration`.
  void FeedIteration(int64_t iteration);

  std::unique_ptr<Pipeline> pipeline_;
  std::vector<std::pair<FeedSpec, OpSpec>> feeds_;  // per external_source node
  std::string reader_;
  int64_t epoch_iterations_ = 0;
  int64_t epoch_samples_ = 0;
  int64_t scheduled_ = 0;
  int64_t total_ = 0;
};

// Output i of `out` in host memory: CPU outputs as they are, GPU outputs copied (and waited for).
TensorListCPU OutputToHost(const PipelineOutputs& out, int i);

// Checkpoint files (run --resume / --checkpoint): read whole; written to FILE.tmp and renamed over
// FILE. ConfigError naming the file when it cannot be read or written.
std::string ReadCheckpointFile(const std::string& path);
void WriteCheckpointFile(const std::string& path, const std::string& checkpoint);

// Bytes of all outputs of one iteration.
int64_t OutputBytes(const PipelineOutputs& out);

}  // namespace conveyor::cli
