// readers.video's schema and factory (registered by video_registration.cc or the plugin,
// video_plugin.cc); the operator is video_reader.h.
#include "operators/video/decode_args.h"
#include "operators/video/video_ops.h"
#include "operators/video/video_reader.h"

namespace conveyor::ops::video {

namespace {

OpSchema MakeSchema() {
  OpSchema schema("readers.video");
  schema
          .Doc("Reads clips of video files (MP4/MOV, MKV/WebM, AVI, MPEG-TS, FLV, IVF; H.264, HEVC, VP9, AV1, "
               "MPEG-4 Part 2 and whatever else libavcodec decodes): sequence_length frames at `stride`, one clip "
               "every `step` frames, as FHWC uint8 RGB, frame-accurately (B-frames, variable frame rate and "
               "non-IDR keyframes included), with labels; sharded and shuffled per epoch like readers.file. "
               "CPU backend: libavcodec; GPU backend (device: gpu): NVDEC loaded at run time, RGB written on the GPU, "
               "files NVDEC cannot take decoded on the CPU and uploaded (said once, counted); docs/video.md.")
          .Output("video", "uint8 [F, H, W, 3] (FHWC): the clip's frames as RGB.")
          .Output("labels", "int32 [1]: the file's label.")
          .OptionalOutput("frame_num", "enable_frame_num", "int32 [1]: the clip's first frame (from 0).")
          .OptionalOutput("timestamps", "enable_timestamps", "float32 [F]: each frame's timestamp in seconds.")
          .Arg<std::vector<std::string>>("filenames", std::vector<std::string>{}, "Video files.")
          .Path()
          .Arg<std::string>("file_root", "",
                            "A folder with one subfolder of videos per class (labels: sorted folder index).")
          .Path()
          .Arg<std::string>("file_list", "",
                            "A text file of `path label [start [end]]` lines (paths relative to the list; the "
                            "range in seconds, or in frames with file_list_frame_num).")
          .Path()
          .Arg<std::vector<int64_t>>("labels", std::vector<int64_t>{},
                                     "Labels of `filenames` (default: the file's index).")
          .Arg<std::vector<std::string>>(
              "file_filters", std::vector<std::string>{"*.mp4", "*.m4v", "*.mov", "*.mkv", "*.webm", "*.avi", "*.ts",
                                                       "*.flv", "*.ivf"},
              "fnmatch patterns (case-insensitive) of the files file_root serves.")
          .RequiredArg<int64_t>("sequence_length", "Frames per clip.")
          .Min(1)
          .Arg<int64_t>("stride", 1, "Distance between consecutive frames of a clip.")
          .Min(1)
          .Arg<int64_t>("step", -1, "Distance between the first frames of consecutive clips of a file; -1: sequence_length.")
          .Min(-1)
          .Arg<bool>("file_list_frame_num", false,
                     "file_list ranges are frame numbers (negative: from the end) instead of seconds.")
          .Arg<bool>("enable_frame_num", false, "Adds the output frame_num.")
          .Arg<bool>("enable_timestamps", false, "Adds the output timestamps.")
          .Arg<bool>("random_shuffle", false, "A full permutation of the clips per epoch, from the seed and the epoch.")
          .Arg<int64_t>("shard_id", 0, "This reader's shard.")
          .Min(0)
          .Arg<int64_t>("num_shards", 1, "Shards the clips are cut into (contiguous).")
          .Min(1)
          .Arg<bool>("stick_to_shard", false, "Keep the same shard every epoch (else shard (shard_id + epoch) mod num_shards).")
          .Arg<bool>("pad_last_batch", false,
                     "Pad each shard's epoch to whole batches by repeating its last clip (equal batch counts per shard).")
          .Arg<int64_t>("seed", -1, "Shuffle seed; -1 takes the pipeline's seed.")
          .Min(-1)
          .Arg<std::string>("on_error", "error",
                            "A file that cannot be indexed or is too short, or a clip that cannot be decoded: `error` "
                            "stops the pipeline naming the file and the frame; `skip` leaves the file out when the "
                            "reader is built and replaces a failing clip by the next one (the iteration is redone); "
                            "skipped files and clips are listed in the pipeline's counters.")
          .Choices({"error", "skip"})
          .Arg<int64_t>("max_open_files", 16,
                        "Files kept open between batches (least recently used closed first); clips being decoded at "
                        "once may exceed it.")
          .Min(1);
  return AddDecodeArgs(schema, {"file", "one clip", "clips"}).Backends({Device::kCpu, Device::kGpu});
}

}  // namespace

const OpSchema& VideoReaderSchema() {
  static const OpSchema schema = MakeSchema();
  return schema;
}

std::unique_ptr<Operator> MakeVideoReader(const OpSpec& spec) { return std::make_unique<VideoReaderOp>(spec); }

}  // namespace conveyor::ops::video
