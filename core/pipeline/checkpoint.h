// Checkpoint: the small text from which a pipeline reproduces its batch stream exactly, starting
// at the first iteration the consumer has not received (docs/distributed.md has the format).
//
//   conveyor-checkpoint 1                 format version (Parse refuses any other)
//   iteration 37                          the counter the RNG draws are keyed by
//   seed 42                               pipeline.seed
//   batch_size 64
//   graph 9f86d081884c7d65                FNV-1a 64 of the canonical YAML (below)
//   op decode 3a7bd3e2360a3d29            one line per node: its canonical YAML's hash
//   state reader dataset_size=1000 shard_id=0 num_shards=2 epoch=3 position=128
//
// The canonical YAML is ToYaml of the spec with what does not change the batches neutralised:
// seed and batch_size (their own lines), device_id, num_threads, prefetch_depth, graph_capture,
// cpu_stage_thread, and the readers' shard_id / num_shards (their state lines carry them). So a
// rank resumes on another GPU, with another prefetch depth or thread count, but not with another
// graph, seed, shard or dataset.
//
// | function      | contract                                                                    |
// |---------------|-----------------------------------------------------------------------------|
// | Serialize     | the text above; state lines as the operators wrote them                     |
// | Parse         | InvalidArgument naming the line for anything but version 1's format         |
// | CheckMatches  | InvalidArgument listing every difference between a checkpoint and `spec`   |
// |               | (seed, batch size, nodes added / removed / changed, outputs); dataset size |
// |               | and shard are checked by the reader's RestoreCheckpoint                     |
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/pipeline/spec.h"

namespace conveyor {

inline constexpr int kCheckpointVersion = 1;

struct Checkpoint {
  int64_t iteration = 0;
  uint64_t seed = 0;
  int64_t batch_size = 0;
  std::string graph;                                         // hash of the canonical YAML
  std::vector<std::pair<std::string, std::string>> op_hashes;  // (node, hash), in spec order
  std::vector<std::pair<std::string, std::string>> states;     // (node, Operator::CheckpointState)

  // The fingerprint fields (graph, op_hashes, seed, batch_size) of `spec`; iteration and states empty.
  static Checkpoint Fingerprint(const PipelineSpec& spec);
  std::string Serialize() const;
  static Checkpoint Parse(const std::string& text);
  void CheckMatches(const PipelineSpec& spec) const;
};

}  // namespace conveyor
