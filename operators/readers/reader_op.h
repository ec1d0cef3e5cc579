// ReaderOp: the operator half every reader shares — the sharding arguments, the dataset, the
// ReaderCore that picks each batch's samples, and parallel file access on the CPU stage. A reader
// derives from it and says how to size (SetupSamples) and fill (ReadSamples) one batch.
//
//   Setup(ws):  batch = core.NextBatch(batch_size)   (the reader's state advances once per iteration)
//               open + fstat every file of the batch in parallel → SetupSamples → output shapes
//   RunCpu(ws): ReadSamples in parallel (pread into the executor-allocated outputs), close; every
//               output's per-sample sources (TensorList::sources) = (file, dataset index)
//
// With sample checks (SkipSamplesFailing: a decoder with on_error: skip registered one), Setup
// reads each file whole and runs the checks; a file that fails one, or cannot be read, is skipped
// (counted, listed by SkippedSamples) and the next sample of the stream takes its place, until the
// batch is full. RunCpu then copies from memory instead of reading.
//
// With `read_ahead: true`, Setup also starts reading the next batch's files whole on threads of
// the reader's own (ReadAhead, read_ahead.h), and takes this batch's bytes from the read started
// one iteration before when it was of the same files and read them all (else it opens them as
// above, and its errors are the same). Not combinable with sample checks (an error says so).
//
// Every error names the reader and the file. `seed` -1 (default) takes the pipeline's seed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "operators/readers/dataset.h"
#include "operators/readers/counted_skips.h"
#include "operators/readers/read_ahead.h"
#include "operators/readers/reader_core.h"

namespace conveyor::ops {

// Adds the arguments every reader takes: file_root, file_list, files, labels, file_filters (with
// the reader's default patterns), random_shuffle, shard_id, num_shards, stick_to_shard,
// pad_last_batch, seed, read_ahead.
OpSchema WithReaderArgs(OpSchema schema, std::vector<std::string> default_filters);

class ReaderOp : public Operator {
 public:
  // `class_folders`: file_root's subfolders are classes (readers.file), or not (readers.numpy).
  ReaderOp(const OpSpec& spec, bool class_folders);
  // A reader whose samples come from elsewhere (readers.coco: an annotation file): `dataset` as
  // given; the spec still carries WithReaderArgs' shuffle, shard, seed and read_ahead arguments.
  ReaderOp(const OpSpec& spec, Dataset dataset);
  ~ReaderOp() override;

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;
  std::optional<int64_t> EpochSize(int64_t batch_size) const final;

  const Dataset& dataset() const { return dataset_; }

  // A check of one file's bytes: "" when the sample is fine, else why not ("truncated JPEG: ...").
  // Called in parallel from the CPU stage's threads.
  using SampleCheck = std::function<std::string(const uint8_t* data, size_t size)>;
  // From now on, samples whose output `output` fails `check` (and files that cannot be read) are
  // skipped and replaced (see above). `by` (the registering node's Describe()) appears in
  // messages. Throws InvalidArgument when output `output` is not the file's bytes.
  void SkipSamplesFailing(int output, SampleCheck check, const std::string& by);
  std::vector<Skipped> SkippedSamples() const override;
  // A sample the checks passed but its consumer could not decode (a decoder with on_error: skip,
  // after Setup): from now on dataset index `index` fails the checks with `reason`. The executor
  // then rewinds (RewindIteration) and redoes the iteration, whose Setup skips and replaces it.
  // Thread-safe.
  void RejectSample(int64_t index, const std::string& reason);
  // RestoreCheckpoint(state), and the skips the rewound Setup counted are uncounted (its redo
  // counts them again).
  void RewindIteration(const std::string& state) override;
  // Batches whose files came from the read ahead (read_ahead: true) rather than the CPU stage.
  int64_t read_ahead_batches() const { return read_ahead_batches_; }

  // The files of iteration `iteration`'s batch, in sample order: how a later operator's message
  // names the file of its sample i (a decoder says "sample 3 (file \"/data/x.jpg\")"). The last
  // kSourceHistory iterations are kept — more than any prefetch depth, since the GPU stage runs
  // up to prefetch_depth iterations behind the CPU stage; an older or future iteration gives an
  // empty list. Thread-safe (the GPU stage asks while the CPU stage sets up the next batch).
  static constexpr int64_t kSourceHistory = 64;
  std::vector<std::string> SourcesOf(int64_t iteration) const;

  // The reader's position (epoch, samples of it handed out), for checkpoints: the state after the
  // last Setup. Restore before the next Setup continues from there (the seed must be the same).
  ReaderState State() const { return seeded_ || !restored_ ? core_->state() : *restored_; }
  void RestoreState(const ReaderState& state);
  // The checkpoint line: "dataset_size=N shard_id=s num_shards=S epoch=E position=P". Restoring
  // one of another dataset size or shard throws InvalidArgument saying which differs.
  std::string CheckpointState() const override;
  void RestoreCheckpoint(const std::string& state) override;

 protected:
  struct OpenFile {
    int fd = -1;
    int64_t size = 0;
    int64_t index = 0;  // dataset index
    const uint8_t* content = nullptr;  // the whole file, when Setup read it (sample checks)
  };
  // Output descriptors for the batch's open files (may read headers through the fds).
  virtual OutputDescs SetupSamples(const Workspace& ws, const std::vector<OpenFile>& files) = 0;
  // Fills sample `i` of every output from `file`.
  virtual void ReadSample(Workspace& ws, int i, const OpenFile& file) = 0;
  // Whether output `output` is each file's bytes as they are (what a SampleCheck may judge).
  virtual bool OutputIsFileBytes(int output) const { (void)output; return false; }

  // "op \"readers.file\" (r): file \"/data/x.jpg\"": how messages about one file start.
  std::string FileWhere(int64_t index) const;
  // The files of the batch being set up / read (this iteration's SourcesOf).
  const std::vector<std::string>& batch_paths() const { return batch_paths_; }
  // Reads exactly `bytes` at `offset` (from memory when Setup read the file) or throws
  // InvalidArgument naming the file (short read = the file changed or was truncated).
  void ReadExactly(const OpenFile& file, void* dst, int64_t bytes, int64_t offset) const;

 private:
  void InitCore();  // the sharding options from the spec, and the core over dataset_
  void CloseAll();
  void OpenAll(const Workspace& ws);
  // Sample checks: reads every file of the batch whole, checks it, replaces the ones skipped.
  void ReadAndCheck(const Workspace& ws);
  // "" or why file `f` is skipped; fills `bytes` with the whole file and closes it.
  std::string LoadAndCheck(OpenFile& f, std::vector<uint8_t>& bytes) const;

  // Four readers open 167k files/s on the H100 machine (docs/readers.md): ~1.5 ms per batch of 256.
  static constexpr int kReadAheadThreads = 4;

  Dataset dataset_;
  ReaderOptions options_;
  int64_t seed_arg_;
  bool read_ahead_arg_;
  std::optional<ReaderCore> core_;
  bool seeded_ = false;
  std::vector<OpenFile> files_;  // the current batch's, between Setup and RunCpu
  std::vector<std::string> batch_paths_;
  std::vector<SampleSource> batch_sources_;
  std::vector<SampleCheck> checks_;  // set before the first iteration (ConnectInput), then read-only
  std::string checked_by_;
  std::vector<std::vector<uint8_t>> contents_;  // per batch position, reused (sample checks, read ahead)
  mutable std::mutex skipped_mutex_;
  std::map<int64_t, size_t> skipped_at_;  // dataset index -> position in skipped_
  std::vector<Skipped> skipped_;
  CountedSkips counted_;                    // positions in skipped_ each recent Setup counted
  std::map<int64_t, std::string> rejected_;  // dataset index -> why its consumer rejected it
  std::optional<ReaderState> restored_;  // applied when the first Setup seeds the core
  std::unique_ptr<ReadAhead> read_ahead_;  // read_ahead: true, from the first Setup
  int64_t read_ahead_batches_ = 0;
  mutable std::mutex sources_mutex_;
  std::vector<std::pair<int64_t, std::vector<std::string>>> sources_;  // ring, by iteration
};

}  // namespace conveyor::ops
