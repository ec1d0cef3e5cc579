// readers.video: clips of video files — FHWC uint8 RGB sequences of sequence_length frames at
// `stride`, one every `step` frames of each file — with labels, sharded and shuffled per epoch by
// the reader core every reader shares (reader_core.h), so resuming a checkpoint is exact.
//
// | output     | dtype   | shape per sample            | content                                  |
// |------------|---------|-----------------------------|------------------------------------------|
// | video      | uint8   | [F, H, W, 3], layout FHWC   | the clip's frames, RGB (F = sequence_len)|
// | labels     | int32   | [1]                         | the file's label                         |
// | frame_num  | int32   | [1]    (enable_frame_num)   | the clip's first frame (from 0)          |
// | timestamps | float32 | [F]    (enable_timestamps)  | each frame's time in seconds (the        |
// |            |         |                             | container's timestamps, as libavformat   |
// |            |         |                             | presents them)                           |
//
// A sample is one clip (file, first frame) of the ClipList built, when the pipeline is built,
// from every file's ClipIndex (indexed in parallel, cached process-wide). Per iteration:
//
//   Setup:   batch = ReaderCore::NextBatch (clip numbers; with on_error: skip, clips that failed
//            before are replaced by the next of the stream) → output shapes from the indices
//   RunCpu:  every clip on the CPU stage's threads: DecoderPool::Acquire(file) → ClipDecoder::
//            Decode(frames) straight into the output buffer → back to the pool
//   RunGpu:  (device: gpu) the same on the GPU stage's threads, NVDEC decoders (nvdec/) writing RGB
//            straight into the device output, each on its own stream ordered after ws.stream()
//            and finished before RunGpu returns; a file closed leaves its NVDEC decoder to the
//            next one opened (nvdec_sessions()); files NVDEC cannot take (no libnvcuvid, codec,
//            depth, size) decode on the CPU into pinned staging and are uploaded — said once on
//            stderr, counted (nvdec_fallback_files / _clips)
//
// on_error (as the decoders'): `error` stops the pipeline with the file and the frame;
// `skip` leaves out files that cannot be indexed (or are too short) when the reader is built, and
// a clip that fails to decode makes the executor redo the iteration with the clip replaced by the
// next one of the stream (SampleRejected, docs/executor.md "Re-filling a batch"); skipped files
// and clips are listed in SkippedSamples (the pipeline's counters).
//
// Checkpoints: "clips=N fingerprint=F shard_id=s num_shards=S epoch=E position=P"; another data
// set, clip shape or rank is refused naming what differs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "operators/readers/counted_skips.h"
#include "operators/readers/reader_core.h"
#include "operators/video/clip_list.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/decoder_pool.h"
#include "operators/video/nvdec/nvdec_decoder.h"
#include "operators/video/video_file_list.h"
#include "operators/video/video_limits.h"

namespace conveyor::ops::video {

const OpSchema& VideoReaderSchema();

class VideoReaderOp final : public Operator {
 public:
  explicit VideoReaderOp(const OpSpec& spec);

  OutputDescs Setup(const Workspace& ws) override;
  void RunCpu(Workspace& ws) override;
  void RunGpu(Workspace& ws) override;
  std::optional<int64_t> EpochSize(int64_t batch_size) const override;
  std::string CheckpointState() const override;
  void RestoreCheckpoint(const std::string& state) override;
  void RewindIteration(const std::string& state) override;
  std::vector<Skipped> SkippedSamples() const override;

  // The position (epoch, clips of it handed out) after the last Setup.
  ReaderState State() const { return seeded_ || !restored_ ? core_->state() : *restored_; }
  void RestoreState(const ReaderState& state);

  const ClipList& clips() const { return clips_; }
  const std::vector<VideoFileEntry>& entries() const { return entries_; }
  // The clip numbers of the batch the last Setup drew.
  const std::vector<int64_t>& batch_clips() const { return batch_; }
  int64_t open_files() const { return pool_->open(); }
  int64_t file_opens() const { return pool_->opens(); }
  // GPU backend: files opened with the CPU decoder because NVDEC could not take them, the clips
  // decoded that way, and why the first one fell back ("" when none did).
  int64_t nvdec_fallback_files() const { return fallback_files_.load(); }
  int64_t nvdec_fallback_clips() const { return fallback_clips_.load(); }
  int64_t nvdec_clips() const { return nvdec_clips_.load(); }
  std::string nvdec_fallback_reason() const;
  // NVDEC decoders created, and files that took one a closed file left instead (nvdec_sessions.h).
  NvdecSessionStats nvdec_sessions() const { return SessionStats(*nvdec_options_.sessions); }

 private:
  void ListEntries();
  void BuildClips();
  std::string SampleWhere(int sample, int n, int64_t clip) const;
  // Sample i: its small outputs through `small(output)` and its clip into `video(nvdec)` (where
  // the frames go for a decoder that is / is not NVDEC).
  void DecodeSample(int sample, const std::function<TensorListCPU&(int)>& small,
                    const std::function<uint8_t*(bool)>& video);
  // Runs `decode(i)` for every sample on ws's threads, then fails or rejects as on_error says.
  void DecodeBatch(Workspace& ws, const std::function<void(int)>& decode);
  std::unique_ptr<ClipDecoder> OpenDecoder(const std::shared_ptr<const ClipIndex>& index);
  void Reject(int64_t clip, const std::string& reason);
  void CountSkip(const std::string& source, const std::string& reason);

  std::string where_;
  VideoLimits limits_;
  CpuDecoderOptions cpu_options_;
  ClipParams params_;
  bool skip_ = false;
  int64_t seed_arg_;
  ReaderOptions options_;
  std::vector<VideoFileEntry> entries_;
  std::vector<int64_t> path_ids_;  // per entry: one id per distinct path (the decoder pool's key)
  ClipList clips_;
  std::optional<ReaderCore> core_;
  bool seeded_ = false;
  std::optional<ReaderState> restored_;
  std::unique_ptr<DecoderPool> pool_;
  std::vector<int64_t> batch_;
  int slot_frame_num_ = -1, slot_timestamps_ = -1;
  mutable std::mutex skipped_mutex_;
  std::vector<Skipped> skipped_;
  std::map<std::string, size_t> skipped_at_;  // source -> position in skipped_
  ops::CountedSkips counted_;                 // skips each recent Setup counted (uncounted on a rewind)
  std::map<int64_t, std::string> rejected_;   // clip -> why it failed to decode
  // GPU backend.
  std::atomic<bool> gpu_{false};
  NvdecOptions nvdec_options_;
  std::atomic<int64_t> fallback_files_{0}, fallback_clips_{0}, nvdec_clips_{0};
  mutable std::mutex gpu_mutex_;
  std::string fallback_reason_;
  std::map<int, Buffer> staging_;                        // slot -> pinned copy of the video output
  std::map<int, std::vector<TensorListCPU>> small_host_;  // slot -> labels, frame_num, timestamps
};

}  // namespace conveyor::ops::video
