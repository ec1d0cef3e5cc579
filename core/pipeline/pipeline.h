// Pipeline: the C++ entry point — a YAML file (or spec) turned into batches, iteration after
// iteration.
//
//   Pipeline p = Pipeline::FromFile("pipelines/train.yaml");
//   p.Build();                          // graph, operators, streams, slots; primes prefetch_depth
//   for (;;) {
//     PipelineOutputs out = p.Outputs();  // blocks until the oldest scheduled iteration is ready
//     out.WaitOn(my_stream);              // or out.Sync()
//     Train(out.Gpu(out.Index("images")), my_stream);
//     out.Release();                      // the slot goes back to the ring (also on destruction)
//     p.Run();                            // schedule one more iteration
//   }
//
// With external_source nodes: Feed(node, batch) once per iteration before Run(); Build() primes
// only as many iterations as have been fed (up to prefetch_depth).
// Scheduling, ordering and error behaviour: executor.h.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/pipeline/executor.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/spec.h"

namespace conveyor {

class Pipeline {
 public:
  // Throw ConfigError (file:line:col) for a bad file.
  static Pipeline FromFile(const std::string& path, GraphOptions options = {});
  static Pipeline FromYaml(const std::string& text, const std::string& base_dir = "", GraphOptions options = {});
  explicit Pipeline(PipelineSpec spec, GraphOptions options = {});
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  // Builds the graph (ConfigError / PluginError), creates operators, streams and slots, starts the
  // stage thread and schedules the first prefetch_depth iterations. Throws InvalidArgument when
  // called twice.
  void Build();
  bool built() const { return executor_ != nullptr; }
  // Schedules one more iteration (InvalidArgument before Build, or when an external_source has
  // no batch for it).
  void Run();
  // The outputs of the oldest scheduled iteration not yet returned (see Executor::Pop).
  PipelineOutputs Outputs();
  // Queues one batch for an external_source node; before Build too.
  void Feed(const std::string& node, TensorListCPU batch);
  void Feed(const std::string& node, TensorListGPU batch);

  const PipelineSpec& spec() const { return spec_; }
  // InvalidArgument before Build.
  const Graph& graph() const;
  std::vector<std::string> output_names() const;
  ExecutorCounters counters() const;
  // The samples one epoch of reader node `reader` delivers (its shard, with padding when
  // pad_last_batch; see operators/readers/reader_core.h). InvalidArgument before Build, for an
  // unknown node (with a suggestion) and for a node that is not a reader.
  int64_t EpochSize(const std::string& reader) const;

  // Checkpoint / resume (docs/distributed.md; format: checkpoint.h). Checkpoint() returns the
  // state from which the first iteration not yet returned by Outputs() is reproduced bit for bit
  // (prefetched iterations included: it is the snapshot taken when that iteration was scheduled,
  // so it never waits for the stage). InvalidArgument before Build.
  // ResumeFrom(text), before Build: Build checks the checkpoint against this pipeline and throws
  // InvalidArgument saying what differs (seed, batch size, nodes; a reader's dataset size or
  // shard), then starts at the checkpoint's iteration with the readers where they were.
  std::string Checkpoint() const;
  void ResumeFrom(std::string checkpoint);

 private:
  void CheckBuilt(const char* what) const;

  PipelineSpec spec_;
  GraphOptions options_;
  std::vector<std::pair<std::string, std::variant<TensorListCPU, TensorListGPU>>> pending_feeds_;
  std::unique_ptr<Executor> executor_;
  std::string resume_;       // ResumeFrom's text, applied by Build
  std::string fingerprint_;  // Checkpoint::Fingerprint(spec_).Serialize(), from Build
};

}  // namespace conveyor
