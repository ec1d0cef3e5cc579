#include "operators/video/video_reader.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/memory/buffer.h"
#include "core/tensor/copy.h"
#include "operators/readers/dataset.h"
#include "operators/readers/io/byte_source.h"
#include "operators/video/decode_args.h"
#include "operators/video/nvdec/gpu_clip_decoder.h"

namespace conveyor::ops::video {
namespace {

constexpr int kIndexThreads = 16;  // files indexed at once when the reader is built

// Runs work(i) for i in [0, n) on up to kIndexThreads threads; each call catches its own errors.
void ForEachParallel(int64_t n, const std::function<void(int64_t)>& work) {
  std::atomic<int64_t> next{0};
  const auto run = [&] {
    for (int64_t i; (i = next++) < n;) work(i);
  };
  std::vector<std::jthread> threads;
  for (int64_t t = 1; t < std::min<int64_t>(kIndexThreads, n); ++t) threads.emplace_back(run);
  run();
}

}  // namespace

VideoReaderOp::VideoReaderOp(const OpSpec& spec)
    : Operator(spec), where_(spec.Describe()), params_(), clips_(ClipParams{}) {
  ReadDecodeArgs(spec, limits_, cpu_options_);
  params_.sequence_length = spec.Arg<int64_t>("sequence_length");
  params_.stride = spec.Arg<int64_t>("stride");
  const int64_t step = spec.Arg<int64_t>("step");
  if (step == 0) throw InvalidArgument(where_ + ": argument \"step\": expected -1 (sequence_length) or >= 1, got 0");
  params_.step = step < 0 ? params_.sequence_length : step;
  params_.frame_num_ranges = spec.Arg<bool>("file_list_frame_num");
  skip_ = spec.Arg<std::string>("on_error") == "skip";
  seed_arg_ = spec.Arg<int64_t>("seed");
  options_.random_shuffle = spec.Arg<bool>("random_shuffle");
  options_.shard_id = spec.Arg<int64_t>("shard_id");
  options_.num_shards = spec.Arg<int64_t>("num_shards");
  options_.stick_to_shard = spec.Arg<bool>("stick_to_shard");
  options_.pad_last_batch = spec.Arg<bool>("pad_last_batch");
  slot_frame_num_ = spec.OutputSlot("frame_num");
  slot_timestamps_ = spec.OutputSlot("timestamps");
  ListEntries();
  BuildClips();
  core_.emplace(clips_.size(), options_, where_);  // validates the shard now
  // The pool is keyed by distinct path: entries of one file (several file_list ranges) share decoders.
  std::map<int64_t, std::shared_ptr<const ClipIndex>> index_of;
  for (const ClipList::File& f : clips_.files()) index_of[path_ids_[static_cast<size_t>(f.entry)]] = f.index;
  pool_ = std::make_unique<DecoderPool>(spec.Arg<int64_t>("max_open_files"), [this, index_of](int64_t path_id) {
    return OpenDecoder(index_of.at(path_id));
  });
}

void VideoReaderOp::ListEntries() {
  const OpSpec& spec = this->spec();
  const std::string root = spec.Arg<std::string>("file_root");
  const std::string list = spec.Arg<std::string>("file_list");
  const auto files = spec.Arg<std::vector<std::string>>("filenames");
  const auto labels = spec.Arg<std::vector<int64_t>>("labels");
  const int given = !root.empty() + !list.empty() + !files.empty();
  if (given != 1) {
    throw InvalidArgument(where_ + ": give exactly one of filenames, file_root and file_list (got " +
                          std::to_string(given) + ")");
  }
  if (!labels.empty() && files.empty()) {
    throw InvalidArgument(where_ + ": labels go with filenames (file_root and file_list carry their own labels)");
  }
  if (!list.empty()) {
    entries_ = ParseVideoFileList(list, where_);
  } else {
    const Dataset d = !root.empty()
                          ? ListFileRoot(root, spec.Arg<std::vector<std::string>>("file_filters"), true, where_)
                          : FromFiles(files, labels, where_);
    for (size_t i = 0; i < d.paths.size(); ++i) entries_.push_back(VideoFileEntry{d.paths[i], d.labels[i], {}, {}, 0});
  }
  std::map<std::string, int64_t> ids;
  for (const VideoFileEntry& e : entries_) {
    path_ids_.push_back(ids.emplace(e.path, static_cast<int64_t>(ids.size())).first->second);
  }
}

void VideoReaderOp::BuildClips() {
  // Every distinct file is indexed once, in parallel (a URL's index waits on the network).
  std::vector<std::string> paths(path_ids_.empty() ? 0 : *std::max_element(path_ids_.begin(), path_ids_.end()) + 1);
  for (size_t e = 0; e < entries_.size(); ++e) paths[static_cast<size_t>(path_ids_[e])] = entries_[e].path;
  std::vector<std::shared_ptr<const ClipIndex>> indices(paths.size());
  std::vector<std::string> errors(paths.size());
  ForEachParallel(static_cast<int64_t>(paths.size()), [&](int64_t i) {
    try {
      indices[static_cast<size_t>(i)] = ClipIndexCache::Global().Get(paths[static_cast<size_t>(i)], limits_);
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(i)] = e.what();
    }
  });
  clips_ = ClipList(params_);
  std::string first_skipped;
  for (size_t e = 0; e < entries_.size(); ++e) {
    const size_t id = static_cast<size_t>(path_ids_[e]);
    std::string reason = errors[id];
    if (reason.empty()) {
      reason = clips_.Add(static_cast<int64_t>(e), indices[id], entries_[e]);
      if (!reason.empty()) reason = "\"" + entries_[e].path + "\": " + reason;
    }
    if (reason.empty()) continue;
    if (!skip_) throw InvalidArgument(where_ + ": " + reason);
    if (first_skipped.empty()) first_skipped = reason;
    CountSkip(entries_[e].path, reason);
  }
  if (clips_.size() == 0) {
    throw InvalidArgument(where_ + ": no clips: every one of the " + std::to_string(entries_.size()) +
                          " files was skipped (on_error: skip); the first: " + first_skipped);
  }
}

std::optional<int64_t> VideoReaderOp::EpochSize(int64_t batch_size) const {
  return ReaderCore::EpochSize(clips_.size(), options_, batch_size);
}

void VideoReaderOp::CountSkip(const std::string& source, const std::string& reason) {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  auto [it, added] = skipped_at_.emplace(source, skipped_.size());
  if (added) skipped_.push_back(Skipped{source, reason, 0});
  ++skipped_[it->second].times;
  counted_.Add(it->second);
}

std::vector<Operator::Skipped> VideoReaderOp::SkippedSamples() const {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  return skipped_;
}

OutputDescs VideoReaderOp::Setup(const Workspace& ws) {
  if (!seeded_) {
    options_.seed = seed_arg_ >= 0 ? static_cast<uint64_t>(seed_arg_) : ws.seed();
    core_.emplace(clips_.size(), options_, where_);
    if (restored_) core_->Restore(*restored_);
    seeded_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(skipped_mutex_);
    counted_.BeginSetup(core_->state());
  }
  batch_ = core_->NextBatch(ws.batch_size());
  // on_error: skip: clips that failed before give way to the next ones of the stream.
  for (int64_t in_a_row = 0;;) {
    std::vector<size_t> again;
    for (size_t i = 0; i < batch_.size(); ++i) {
      const auto it = rejected_.find(batch_[i]);
      if (it == rejected_.end()) continue;
      again.push_back(i);
      const ClipList::Clip clip = clips_.At(batch_[i]);
      CountSkip(clip.file->index->name + ":" + std::to_string(clip.start), it->second);
    }
    if (again.empty()) break;
    // As the file reader: a round where some clip passed restarts the count; more than twice the
    // clips in a row (a whole epoch among them) means every clip fails.
    in_a_row = (again.size() < batch_.size() ? 0 : in_a_row) + static_cast<int64_t>(again.size());
    if (in_a_row > 2 * clips_.size()) {
      throw InvalidArgument(where_ + ": skipped " + std::to_string(in_a_row) + " clips in a row while filling one "
                            "batch, more than twice the " + std::to_string(clips_.size()) +
                            " there are: every clip fails to decode");
    }
    const std::vector<int64_t> more = core_->NextSamples(static_cast<int64_t>(again.size()), ws.batch_size());
    for (size_t k = 0; k < again.size(); ++k) batch_[again[k]] = more[k];
  }
  const int64_t frames = params_.sequence_length;
  TensorListDesc video{{}, DType::kUInt8, "FHWC"}, labels{{}, DType::kInt32, {}};
  TensorListDesc frame_num{{}, DType::kInt32, {}}, timestamps{{}, DType::kFloat32, {}};
  for (int64_t c : batch_) {
    const VideoStreamInfo& info = clips_.At(c).file->index->info;
    video.shapes.push_back(Shape{frames, info.height, info.width, 3});
    labels.shapes.push_back(Shape{1});
    frame_num.shapes.push_back(Shape{1});
    timestamps.shapes.push_back(Shape{frames});
  }
  OutputDescs descs(static_cast<size_t>(2 + (slot_frame_num_ >= 0) + (slot_timestamps_ >= 0)));
  descs[0] = std::move(video);
  descs[1] = std::move(labels);
  if (slot_frame_num_ >= 0) descs[static_cast<size_t>(slot_frame_num_)] = std::move(frame_num);
  if (slot_timestamps_ >= 0) descs[static_cast<size_t>(slot_timestamps_)] = std::move(timestamps);
  return descs;
}

std::string VideoReaderOp::SampleWhere(int sample, int n, int64_t clip) const {
  const ClipList::Clip c = clips_.At(clip);
  const int64_t last = c.start + (params_.sequence_length - 1) * params_.stride;
  return where_ + ": sample " + std::to_string(sample) + " of " + std::to_string(n) + " (clip " + std::to_string(clip) +
         ": frames " + std::to_string(c.start) + ".." + std::to_string(last) +
         (params_.stride > 1 ? " at stride " + std::to_string(params_.stride) : "") + ")";
}

std::unique_ptr<ClipDecoder> VideoReaderOp::OpenDecoder(const std::shared_ptr<const ClipIndex>& index) {
  if (!gpu_.load()) return OpenCpuClipDecoder(OpenByteSource(index->name), index, limits_, cpu_options_);
  GpuClipDecoder opened = OpenGpuClipDecoder(OpenByteSource(index->name), index, limits_, cpu_options_, nvdec_options_);
  if (!opened.nvdec) {
    ++fallback_files_;
    std::lock_guard<std::mutex> lock(gpu_mutex_);
    if (fallback_reason_.empty()) {
      fallback_reason_ = opened.fallback;
      std::fprintf(stderr,
                   "%s: NVDEC not used for \"%s\": %s; decoding on the CPU and uploading (said once; counted per "
                   "file)\n",
                   where_.c_str(), index->name.c_str(), opened.fallback.c_str());
    }
  }
  return std::move(opened.decoder);
}

std::string VideoReaderOp::nvdec_fallback_reason() const {
  std::lock_guard<std::mutex> lock(gpu_mutex_);
  return fallback_reason_;
}

void VideoReaderOp::DecodeSample(int i, const std::function<TensorListCPU&(int)>& small,
                                 const std::function<uint8_t*(bool)>& video) {
  const ClipList::Clip clip = clips_.At(batch_[static_cast<size_t>(i)]);
  const int64_t id = path_ids_[static_cast<size_t>(clip.file->entry)];
  const std::vector<int64_t> frames = clips_.Frames(clip.start);
  *static_cast<int32_t*>(small(1).raw_sample(i)) = entries_[static_cast<size_t>(clip.file->entry)].label;
  if (slot_frame_num_ >= 0) *static_cast<int32_t*>(small(slot_frame_num_).raw_sample(i)) = static_cast<int32_t>(clip.start);
  if (slot_timestamps_ >= 0) {
    auto* t = static_cast<float*>(small(slot_timestamps_).raw_sample(i));
    for (size_t k = 0; k < frames.size(); ++k) t[k] = static_cast<float>(clip.file->index->Seconds(frames[k]));
  }
  DecoderPool::Lease decoder = pool_->Acquire(id);
  try {
    const bool gpu = gpu_.load();
    const bool nvdec = gpu && IsNvdec(*decoder);
    if (gpu) ++(nvdec ? nvdec_clips_ : fallback_clips_);
    decoder->Decode(frames, video(nvdec));
  } catch (...) {
    decoder.Drop();  // it may stand anywhere: the next clip of the file opens a fresh one
    throw;
  }
}

void VideoReaderOp::RunCpu(Workspace& ws) {
  DecodeBatch(ws, [&](int i) {
    DecodeSample(
        i, [&](int o) -> TensorListCPU& { return ws.OutputCpu(o); },
        [&](bool) { return static_cast<uint8_t*>(ws.OutputCpu(0).raw_sample(i)); });
  });
}

// The same clips as RunCpu; NVDEC decoders write into the device output (after ws.stream()'s
// work so far, finished when their Decode returns: nothing to wait for after the loop), CPU
// fallbacks into the slot's pinned staging (uploaded after). The small outputs are written on the
// host (pinned, per slot) and copied.
void VideoReaderOp::RunGpu(Workspace& ws) {
  gpu_.store(true);
  const StreamView stream = ws.stream();
  nvdec_options_.stream->stream.store(static_cast<void*>(stream.get()));
  TensorListGPU& video = ws.OutputGpu(0);
  std::vector<TensorListCPU>* small = nullptr;
  {
    std::lock_guard<std::mutex> lock(gpu_mutex_);
    small = &small_host_[ws.slot()];
  }
  small->resize(static_cast<size_t>(ws.num_outputs()));
  for (int o = 1; o < ws.num_outputs(); ++o) {
    const TensorListGPU& out = ws.OutputGpu(o);
    (*small)[static_cast<size_t>(o)].Resize(out.shapes(), out.dtype(), std::nullopt, MemoryKind::kPinned);
  }
  std::vector<char> on_host(batch_.size(), 0);
  uint8_t* staging = nullptr;
  const auto host_video = [&](int i) {
    std::lock_guard<std::mutex> lock(gpu_mutex_);
    if (staging == nullptr) {
      Buffer& b = staging_[ws.slot()];
      if (b.empty() || b.size() < video.nbytes()) b = Buffer::Allocate(MemoryKind::kPinned, video.nbytes());
      staging = static_cast<uint8_t*>(b.host_ptr());
    }
    on_host[static_cast<size_t>(i)] = 1;
    return staging + video.offset(i);
  };
  std::exception_ptr failure;
  try {
    DecodeBatch(ws, [&](int i) {
      DecodeSample(
          i, [&](int o) -> TensorListCPU& { return (*small)[static_cast<size_t>(o)]; },
          [&](bool nvdec) { return nvdec ? static_cast<uint8_t*>(video.raw_sample(i)) : host_video(i); });
    });
  } catch (...) {
    failure = std::current_exception();
  }
  for (int i = 0; i < video.num_samples(); ++i) {
    if (on_host[static_cast<size_t>(i)] == 0) continue;
    CopyBytesAsync(video.raw_sample(i), staging + video.offset(i), static_cast<size_t>(video.shape(i).num_elements()),
                   stream);
  }
  for (int o = 1; o < ws.num_outputs(); ++o) CopyAsync(ws.OutputGpu(o), (*small)[static_cast<size_t>(o)], stream);
  if (failure) std::rethrow_exception(failure);
}

void VideoReaderOp::DecodeBatch(Workspace& ws, const std::function<void(int)>& decode) {
  const int n = static_cast<int>(batch_.size());
  std::vector<SampleSource> sources(batch_.size());
  for (size_t i = 0; i < batch_.size(); ++i) sources[i] = SampleSource{clips_.At(batch_[i]).file->index->name, batch_[i]};
  auto shared = std::make_shared<const std::vector<SampleSource>>(std::move(sources));
  for (int o = 0; o < ws.num_outputs(); ++o) {
    if (ws.OutputIsGpu(o)) {
      ws.OutputGpu(o).set_shared_sources(shared);
    } else {
      ws.OutputCpu(o).set_shared_sources(shared);
    }
  }
  std::vector<std::string> reasons(batch_.size());
  ws.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      try {
        decode(static_cast<int>(i));
      } catch (const std::exception& e) {
        reasons[static_cast<size_t>(i)] = e.what();
      }
    }
  });
  const auto failed = std::find_if(reasons.begin(), reasons.end(), [](const std::string& r) { return !r.empty(); });
  if (failed == reasons.end()) return;
  const int first = static_cast<int>(failed - reasons.begin());
  const std::string message = SampleWhere(first, n, batch_[static_cast<size_t>(first)]) + ": " + *failed;
  if (!skip_) throw SampleError(message, first, *failed);
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (!reasons[i].empty()) Reject(batch_[i], reasons[i]);
  }
  throw SampleRejected(message + " (on_error: skip: the clip is replaced and the iteration redone)");
}

void VideoReaderOp::Reject(int64_t clip, const std::string& reason) {
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  rejected_.emplace(clip, reason);
}

void VideoReaderOp::RestoreState(const ReaderState& state) {
  if (state.epoch < 0 || state.position < 0) {
    throw InvalidArgument(where_ + ": cannot restore reader state " + ReaderCore::Save(state) +
                          " (epoch and position must be >= 0)");
  }
  restored_ = state;
  if (seeded_) core_->Restore(state);
}

std::string VideoReaderOp::CheckpointState() const {
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof(fingerprint), "%016" PRIx64, clips_.Fingerprint());
  return "clips=" + std::to_string(clips_.size()) + " fingerprint=" + fingerprint +
         " shard_id=" + std::to_string(options_.shard_id) + " num_shards=" + std::to_string(options_.num_shards) + " " +
         ReaderCore::Save(State());
}

void VideoReaderOp::RestoreCheckpoint(const std::string& state) {
  long long clips = -1, shard = -1, shards = -1;
  char fingerprint[17] = {0};
  int used = 0;
  if (std::sscanf(state.c_str(), "clips=%lld fingerprint=%16s shard_id=%lld num_shards=%lld %n", &clips, fingerprint,
                  &shard, &shards, &used) != 4) {
    throw InvalidArgument(where_ + ": checkpoint: expected \"clips=N fingerprint=F shard_id=S num_shards=M epoch=E "
                          "position=P\" for readers.video, got \"" + state + "\"");
  }
  const std::string other = where_ + ": the checkpoint is of another pipeline: ";
  char have[17];
  std::snprintf(have, sizeof(have), "%016" PRIx64, clips_.Fingerprint());
  if (clips != clips_.size() || std::string(have) != fingerprint) {
    throw InvalidArgument(other + "its clips (" + std::to_string(clips) + ", fingerprint " + fingerprint +
                          ") are not this reader's (" + std::to_string(clips_.size()) + ", fingerprint " + have +
                          "): other files, frame counts or sequence_length/stride/step");
  }
  if (shard != options_.shard_id || shards != options_.num_shards) {
    throw InvalidArgument(other + "it read shard_id " + std::to_string(shard) + " of num_shards " +
                          std::to_string(shards) + ", this node reads shard_id " + std::to_string(options_.shard_id) +
                          " of num_shards " + std::to_string(options_.num_shards));
  }
  RestoreState(ReaderCore::Parse(state.substr(static_cast<size_t>(used))));
}

void VideoReaderOp::RewindIteration(const std::string& state) {
  RestoreCheckpoint(state);
  std::lock_guard<std::mutex> lock(skipped_mutex_);
  for (size_t k : counted_.TakeSince(State())) --skipped_[k].times;  // the redone Setups count them again

}

}  // namespace conveyor::ops::video
