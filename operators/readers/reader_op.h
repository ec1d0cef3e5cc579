// ReaderOp: the operator half every reader shares — the sharding arguments, the dataset, the
// ReaderCore that picks each batch's samples, and parallel file access on the CPU stage. A reader
// derives from it and says how to size (SetupSamples) and fill (ReadSamples) one batch.
//
//   Setup(ws):  batch = core.NextBatch(batch_size)   (the reader's state advances once per iteration)
//               open + fstat every file of the batch in parallel → SetupSamples → output shapes
//   RunCpu(ws): ReadSamples in parallel (pread into the executor-allocated outputs), close
//
// Every error names the reader and the file. `seed` -1 (default) takes the pipeline's seed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "operators/readers/dataset.h"
#include "operators/readers/reader_core.h"

namespace conveyor::ops {

// Adds the arguments every reader takes: file_root, file_list, files, labels, file_filters (with
// the reader's default patterns), random_shuffle, shard_id, num_shards, stick_to_shard,
// pad_last_batch, seed.
OpSchema WithReaderArgs(OpSchema schema, std::vector<std::string> default_filters);

class ReaderOp : public Operator {
 public:
  // `class_folders`: file_root's subfolders are classes (readers.file), or not (readers.numpy).
  ReaderOp(const OpSpec& spec, bool class_folders);
  ~ReaderOp() override;

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;
  std::optional<int64_t> EpochSize(int64_t batch_size) const final;

  const Dataset& dataset() const { return dataset_; }
  // The files of the current batch, in sample order (for messages of later operators).
  const std::vector<std::string>& batch_paths() const { return batch_paths_; }

 protected:
  struct OpenFile {
    int fd = -1;
    int64_t size = 0;
    int64_t index = 0;  // dataset index
  };
  // Output descriptors for the batch's open files (may read headers through the fds).
  virtual OutputDescs SetupSamples(const Workspace& ws, const std::vector<OpenFile>& files) = 0;
  // Fills sample `i` of every output from `file`.
  virtual void ReadSample(Workspace& ws, int i, const OpenFile& file) = 0;

  // "op \"r\" (readers.file): file \"/data/x.jpg\"": how messages about one file start.
  std::string FileWhere(int64_t index) const;
  // Reads exactly `bytes` at `offset` or throws InvalidArgument naming the file (short read =
  // the file changed or was truncated).
  void ReadExactly(const OpenFile& file, void* dst, int64_t bytes, int64_t offset) const;

 private:
  void CloseAll();

  Dataset dataset_;
  ReaderOptions options_;
  int64_t seed_arg_;
  std::optional<ReaderCore> core_;
  bool seeded_ = false;
  std::vector<OpenFile> files_;  // the current batch's, between Setup and RunCpu
  std::vector<std::string> batch_paths_;
};

}  // namespace conveyor::ops
