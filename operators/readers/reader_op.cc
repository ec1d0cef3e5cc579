#include "operators/readers/reader_op.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace conveyor::ops {

OpSchema WithReaderArgs(OpSchema schema, std::vector<std::string> default_filters) {
  return schema
      .Arg<std::string>("file_root", "", "A folder with one subfolder of files per class (labels: sorted folder index).")
      .Path()
      .Arg<std::string>("file_list", "", "A text file of `relative/path label` lines (paths relative to the list).")
      .Path()
      .Arg<std::vector<std::string>>("files", std::vector<std::string>{}, "Explicit file paths.")
      .Path()
      .Arg<std::vector<int64_t>>("labels", std::vector<int64_t>{}, "Labels of `files` (default: the file's index).")
      .Arg<std::vector<std::string>>("file_filters", std::move(default_filters),
                                     "fnmatch patterns (case-insensitive) of the files file_root serves.")
      .Arg<bool>("random_shuffle", false, "A full permutation of the dataset per epoch, from the seed and the epoch.")
      .Arg<int64_t>("shard_id", 0, "This reader's shard.")
      .Min(0)
      .Arg<int64_t>("num_shards", 1, "Shards the dataset is cut into (contiguous).")
      .Min(1)
      .Arg<bool>("stick_to_shard", false, "Keep the same shard every epoch (else shard (shard_id + epoch) mod num_shards).")
      .Arg<bool>("pad_last_batch", false,
                 "Pad each shard's epoch to whole batches by repeating its last sample (equal batch counts per shard).")
      .Arg<int64_t>("seed", -1, "Shuffle seed; -1 takes the pipeline's seed.")
      .Min(-1)
      .Arg<bool>("read_ahead", false,
                 "Read the next batch's files whole on four threads of the reader's own while the pipeline works "
                 "on this batch (files are read one iteration early). Not with a decoder's on_error: skip.")
      .Backends({Device::kCpu});
}

ReaderOp::ReaderOp(const OpSpec& spec, bool class_folders)
    : Operator(spec), seed_arg_(spec.Arg<int64_t>("seed")), read_ahead_arg_(spec.Arg<bool>("read_ahead")) {
  const std::string where = spec.Describe();
  const std::string root = spec.Arg<std::string>("file_root");
  const std::string list = spec.Arg<std::string>("file_list");
  const std::vector<std::string> files = spec.Arg<std::vector<std::string>>("files");
  const int given = !root.empty() + !list.empty() + !files.empty();
  if (given != 1) {
    throw InvalidArgument(where + ": give exactly one of file_root, file_list and files (got " +
                          std::to_string(given) + ")");
  }
  if (!spec.Arg<std::vector<int64_t>>("labels").empty() && files.empty()) {
    throw InvalidArgument(where + ": labels go with files (file_root and file_list carry their own labels)");
  }
  if (!root.empty()) {
    dataset_ = ListFileRoot(root, spec.Arg<std::vector<std::string>>("file_filters"), class_folders, where);
  }
  if (!list.empty()) dataset_ = ParseFileList(list, where);
  if (!files.empty()) dataset_ = FromFiles(files, spec.Arg<std::vector<int64_t>>("labels"), where);
  InitCore();
}

ReaderOp::ReaderOp(const OpSpec& spec, Dataset dataset)
    : Operator(spec),
      dataset_(std::move(dataset)),
      seed_arg_(spec.Arg<int64_t>("seed")),
      read_ahead_arg_(spec.Arg<bool>("read_ahead")) {
  InitCore();
}

void ReaderOp::InitCore() {
  const OpSpec& spec = this->spec();
  options_.random_shuffle = spec.Arg<bool>("random_shuffle");
  options_.shard_id = spec.Arg<int64_t>("shard_id");
  options_.num_shards = spec.Arg<int64_t>("num_shards");
  options_.stick_to_shard = spec.Arg<bool>("stick_to_shard");
  options_.pad_last_batch = spec.Arg<bool>("pad_last_batch");
  // Validates the shard now (the seed only matters once the first batch is drawn).
  core_.emplace(static_cast<int64_t>(dataset_.paths.size()), options_, spec.Describe());
}

ReaderOp::~ReaderOp() { CloseAll(); }

void ReaderOp::CloseAll() {
  for (OpenFile& f : files_) {
    if (f.fd >= 0) ::close(f.fd);
    f.fd = -1;
  }
  files_.clear();
}

std::string ReaderOp::FileWhere(int64_t index) const {
  return spec().Describe() + ": file \"" + dataset_.paths[static_cast<size_t>(index)] + "\"";
}

std::optional<int64_t> ReaderOp::EpochSize(int64_t batch_size) const {
  return ReaderCore::EpochSize(static_cast<int64_t>(dataset_.paths.size()), options_, batch_size);
}

OutputDescs ReaderOp::Setup(const Workspace& ws) {
  CloseAll();  // a previous iteration that failed between Setup and RunCpu
  if (!seeded_) {
    // First batch: the seed is known now (the pipeline's, unless the op has its own).
    options_.seed = seed_arg_ >= 0 ? static_cast<uint64_t>(seed_arg_) : ws.seed();
    core_.emplace(static_cast<int64_t>(dataset_.paths.size()), options_, spec().Describe());
    if (restored_) core_->Restore(*restored_);
    seeded_ = true;
  }
  if (!checks_.empty()) {
    std::lock_guard<std::mutex> lock(skipped_mutex_);
    counted_.BeginSetup(core_->state());
  }
  const std::vector<int64_t> batch = core_->NextBatch(ws.batch_size());
  files_.assign(batch.size(), OpenFile{});
  for (size_t i = 0; i < batch.size(); ++i) files_[i].index = batch[i];
  if (read_ahead_arg_ && !read_ahead_) read_ahead_ = std::make_unique<ReadAhead>(dataset_.paths, kReadAheadThreads);
  if (!checks_.empty()) {
    ReadAndCheck(ws);
  } else if (read_ahead_ && read_ahead_->Take(batch, contents_)) {
    ++read_ahead_batches_;
    for (size_t i = 0; i < files_.size(); ++i) {
      files_[i].size = static_cast<int64_t>(contents_[i].size());
      files_[i].content = contents_[i].data();
    }
  } else {
    OpenAll(ws);
  }
  if (read_ahead_) read_ahead_->Start(core_->PeekBatch(ws.batch_size()));
  batch_paths_.resize(files_.size());
  batch_sources_.resize(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) {
    batch_paths_[i] = dataset_.paths[static_cast<size_t>(files_[i].index)];
    batch_sources_[i] = SampleSource{batch_paths_[i], files_[i].index};
  }
  {
    std::lock_guard<std::mutex> lock(sources_mutex_);
    if (sources_.empty()) sources_.resize(static_cast<size_t>(kSourceHistory), {-1, {}});
    sources_[static_cast<size_t>(ws.iteration() % kSourceHistory)] = {ws.iteration(), batch_paths_};
  }
  return SetupSamples(ws, files_);
}

void ReaderOp::OpenAll(const Workspace& ws) {
  ws.ParallelFor(static_cast<int64_t>(files_.size()), 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      OpenFile& f = files_[static_cast<size_t>(i)];
      const std::string& path = dataset_.paths[static_cast<size_t>(f.index)];
      f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (f.fd < 0) throw InvalidArgument(FileWhere(f.index) + ": cannot open: " + std::strerror(errno));
      struct stat st {};
      if (::fstat(f.fd, &st) != 0) throw InvalidArgument(FileWhere(f.index) + ": cannot stat: " + std::strerror(errno));
      if (!S_ISREG(st.st_mode)) throw InvalidArgument(FileWhere(f.index) + ": not a regular file");
      f.size = static_cast<int64_t>(st.st_size);
    }
  });
}

void ReaderOp::SkipSamplesFailing(int output, SampleCheck check, const std::string& by) {
  if (read_ahead_arg_) {
    throw InvalidArgument(spec().Describe() + ": " + by + " asks to skip samples its check rejects, which reads and "
                          "checks each batch's files in the CPU stage; this reader's read_ahead: true reads them "
                          "earlier, on its own threads: set read_ahead: false, or on_error: raise");
  }
  if (!OutputIsFileBytes(output)) {
    throw InvalidArgument(spec().Describe() + ": " + by + " asks to skip samples its check rejects, but output " +
                          std::to_string(output) + " of this reader is not each file's bytes");
  }
  checks_.push_back(std::move(check));
  checked_by_ = checked_by_.empty() ? by : checked_by_ + ", " + by;
}

std::vector<Operator::Skipped> ReaderOp::SkippedSamples() const {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  std::vector<Skipped> met;
  for (const Skipped& s : skipped_) {
    if (s.times > 0) met.push_back(s);  // 0: counted only by a Setup that was rewound
  }
  return met;
}

void ReaderOp::RejectSample(int64_t index, const std::string& reason) {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  rejected_.emplace(index, reason);
}

void ReaderOp::RewindIteration(const std::string& state) {
  RestoreCheckpoint(state);
  // The redone Setups count their skips again.
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  for (size_t at : counted_.TakeSince(State())) --skipped_[at].times;
}

std::string ReaderOp::LoadAndCheck(OpenFile& f, std::vector<uint8_t>& bytes) const {
  {
    std::lock_guard<std::mutex> lock(skipped_mutex_);
    const auto it = rejected_.find(f.index);
    if (it != rejected_.end()) return it->second;
  }
  std::string reason = ReadWholeFile(dataset_.paths[static_cast<size_t>(f.index)], bytes);
  if (!reason.empty()) return reason;
  f.size = static_cast<int64_t>(bytes.size());
  for (const SampleCheck& check : checks_) {
    reason = check(bytes.data(), bytes.size());
    if (!reason.empty()) return reason;
  }
  return "";
}

void ReaderOp::ReadAndCheck(const Workspace& ws) {
  contents_.resize(files_.size());
  std::vector<size_t> pending(files_.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  int64_t in_a_row = 0;  // rejections since the last file that passed (an upper bound: by rounds)
  int64_t last_index = 0;
  std::string last_reason;
  while (!pending.empty()) {
    std::vector<std::string> reasons(pending.size());
    ws.ParallelFor(static_cast<int64_t>(pending.size()), 4, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const size_t i = pending[static_cast<size_t>(k)];
        reasons[static_cast<size_t>(k)] = LoadAndCheck(files_[i], contents_[i]);
      }
    });
    std::vector<size_t> again;
    for (size_t k = 0; k < pending.size(); ++k) {
      if (reasons[k].empty()) continue;
      const int64_t index = files_[pending[k]].index;
      again.push_back(pending[k]);
      last_index = index;
      last_reason = reasons[k];
      std::lock_guard<std::mutex> lock(skipped_mutex_);
      const auto [it, fresh] = skipped_at_.emplace(index, skipped_.size());
      if (fresh) skipped_.push_back(Skipped{dataset_.paths[static_cast<size_t>(index)], reasons[k], 0});
      ++skipped_[it->second].times;
      counted_.Add(it->second);
    }
    if (again.empty()) break;
    // A round where some file passed restarts the count. Any 2N draws in a row hold a whole epoch
    // of the N files (each epoch is an order of all of them; a shard's is shorter), so more
    // rejections in a row than that mean no file passes — fewer may just be a long gap between
    // the few that do (one good file of 16, shuffled).
    in_a_row = (again.size() < pending.size() ? 0 : in_a_row) + static_cast<int64_t>(again.size());
    if (in_a_row > 2 * static_cast<int64_t>(dataset_.paths.size())) {
      throw InvalidArgument(spec().Describe() + ": skipped " + std::to_string(in_a_row) +
                            " files in a row while filling one batch, more than twice the dataset's " +
                            std::to_string(dataset_.paths.size()) + ": no file passes the check of " + checked_by_ +
                            " (the last: file \"" + dataset_.paths[static_cast<size_t>(last_index)] + "\": " +
                            last_reason + ")");
    }
    const std::vector<int64_t> more = core_->NextSamples(static_cast<int64_t>(again.size()), ws.batch_size());
    for (size_t j = 0; j < again.size(); ++j) files_[again[j]] = OpenFile{-1, 0, more[j], nullptr};
    pending = std::move(again);
  }
  for (size_t i = 0; i < files_.size(); ++i) files_[i].content = contents_[i].data();
}

std::vector<std::string> ReaderOp::SourcesOf(int64_t iteration) const {
  std::lock_guard<std::mutex> lock(sources_mutex_);
  if (iteration < 0 || sources_.empty()) return {};
  const auto& [it, paths] = sources_[static_cast<size_t>(iteration % kSourceHistory)];
  return it == iteration ? paths : std::vector<std::string>{};
}

void ReaderOp::RestoreState(const ReaderState& state) {
  if (state.epoch < 0 || state.position < 0) {
    throw InvalidArgument(spec().Describe() + ": cannot restore reader state " + ReaderCore::Save(state) +
                          " (epoch and position must be >= 0)");
  }
  restored_ = state;
  if (seeded_) core_->Restore(state);
}

std::string ReaderOp::CheckpointState() const {
  return "dataset_size=" + std::to_string(dataset_.paths.size()) + " shard_id=" + std::to_string(options_.shard_id) +
         " num_shards=" + std::to_string(options_.num_shards) + " " + ReaderCore::Save(State());
}

void ReaderOp::RestoreCheckpoint(const std::string& state) {
  long long size = -1, shard = -1, shards = -1;
  int used = 0;
  if (std::sscanf(state.c_str(), "dataset_size=%lld shard_id=%lld num_shards=%lld %n", &size, &shard, &shards, &used) !=
      3) {
    throw InvalidArgument(spec().Describe() + ": checkpoint: expected \"dataset_size=N shard_id=S num_shards=M epoch=E "
                          "position=P\" for a reader, got \"" + state + "\"");
  }
  const std::string where = spec().Describe() + ": the checkpoint is of another pipeline: ";
  const int64_t have = static_cast<int64_t>(dataset_.paths.size());
  if (size != have) {
    throw InvalidArgument(where + "its dataset had " + std::to_string(size) + " samples, this one has " +
                          std::to_string(have));
  }
  if (shard != options_.shard_id || shards != options_.num_shards) {
    throw InvalidArgument(where + "it read shard_id " + std::to_string(shard) + " of num_shards " +
                          std::to_string(shards) + ", this node reads shard_id " + std::to_string(options_.shard_id) +
                          " of num_shards " + std::to_string(options_.num_shards));
  }
  RestoreState(ReaderCore::Parse(state.substr(static_cast<size_t>(used))));
}

void ReaderOp::RunCpu(Workspace& ws) {
  // One shared list per iteration: older iterations' outputs keep theirs.
  auto sources = std::make_shared<const std::vector<SampleSource>>(std::move(batch_sources_));
  for (int o = 0; o < ws.num_outputs(); ++o) ws.OutputCpu(o).set_shared_sources(sources);
  ws.ParallelFor(static_cast<int64_t>(files_.size()), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      OpenFile& f = files_[static_cast<size_t>(i)];
      ReadSample(ws, static_cast<int>(i), f);
      // Closed here, on the pool: one after another on the stage thread, a batch's closes were
      // 4.5% of the reader's CPU time in perf (~0.17 ms per iteration of 256 photos on this
      // project's 2-core build machine, 2026-11-26). CloseAll below closes what a failure left open.
      if (f.fd >= 0) ::close(f.fd);
      f.fd = -1;
    }
  });
  CloseAll();
}

void ReaderOp::ReadExactly(const OpenFile& file, void* dst, int64_t bytes, int64_t offset) const {
  char* out = static_cast<char*>(dst);
  if (bytes == 0 && offset >= 0 && offset <= file.size) return;  // an empty file Setup read has no buffer
  if (file.content != nullptr) {
    if (offset < 0 || bytes < 0 || offset + bytes > file.size) {
      throw InvalidArgument(FileWhere(file.index) + ": expected " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + ", the file has " + std::to_string(file.size));
    }
    if (bytes > 0) std::memcpy(out, file.content + offset, static_cast<size_t>(bytes));
    return;
  }
  int64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(file.fd, out + done, static_cast<size_t>(bytes - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InvalidArgument(FileWhere(file.index) + ": read failed: " + std::strerror(errno));
    if (n == 0) {
      throw InvalidArgument(FileWhere(file.index) + ": expected " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + ", the file ends after " + std::to_string(done));
    }
    done += n;
  }
}

}  // namespace conveyor::ops
