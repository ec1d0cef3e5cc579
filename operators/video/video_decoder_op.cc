// decoders.video (CPU backend; DALI's fn.experimental.decoders.video): encoded video files handed
// in as bytes (readers.file, external_source) → every frame of the first video stream, or the
// frames start_frame, start_frame + stride, ... (sequence_length of them; 0: to the end), as FHWC
// uint8 RGB.
//
// | input                 | output                         | arguments                                  |
// |-----------------------|--------------------------------|--------------------------------------------|
// | uint8, 1-D per sample | uint8 [F, H, W, 3] (FHWC) RGB, | start_frame, sequence_length, stride;      |
// | (one encoded video),  | H x W the stream's             | max_output_bytes (F x H x W x 3, 2 GiB);   |
// | host placement        |                                | max_pixels, max_frames, decode_timeout_ms  |
//
// Setup demuxes each sample from memory (MemorySource → Demuxer, the path fuzz/video_demux_fuzz
// covers), builds its ClipIndex (packets only, no decoding), picks the frames and checks the output
// against max_output_bytes before anything is allocated. RunCpu decodes each sample on the pipeline's
// threads with the readers' ClipDecoder (same frame accuracy: seek to the keyframe before the first
// frame, decode forward, frames identified by timestamp). Every error names the node and the sample:
//   op "decoders.video" (dec): sample 2 of 3: start_frame 40 is beyond the end: the video has 20 frames
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/operator.h"
#include "operators/readers/io/memory_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/demux.h"
#include "operators/video/decode_args.h"
#include "operators/video/video_limits.h"
#include "operators/video/video_ops.h"

namespace conveyor::ops::video {
namespace {

OpSchema MakeSchema() {
  OpSchema schema("decoders.video");
  schema
        .Doc("Decodes encoded video files given as bytes (MP4/MOV, MKV/WebM, AVI, MPEG-TS, FLV, IVF; H.264, HEVC, "
             "VP9, AV1, MPEG-4 Part 2 and whatever else libavcodec decodes) to FHWC uint8 RGB: every frame of the "
             "first video stream, or sequence_length frames from start_frame at `stride`; frame-accurately, with "
             "readers.video's decoder (B-frames, variable frame rate, non-IDR keyframes). CPU backend: libavcodec; "
             "docs/video.md.")
        .Input("encoded", {}, {DType::kUInt8}, Placement::kHost,
               "Encoded video files, one 1-D uint8 sample each (readers.file's output); the container is read from "
               "the content, not a name.")
        .Output("video", "uint8 [F, H, W, 3] (FHWC): the frames as RGB.")
        .Arg<int64_t>("start_frame", 0, "The first frame decoded (from 0, in presentation order).")
        .Min(0)
        .Arg<int64_t>("sequence_length", 0,
                      "Frames decoded per sample; 0: every frame from start_frame (at `stride`) to the end.")
        .Min(0)
        .Arg<int64_t>("stride", 1, "Distance between consecutive frames decoded.")
        .Min(1)
        .Arg<int64_t>("max_output_bytes", int64_t{1} << 31,
                      "Largest output of one sample (frames x height x width x 3 bytes, from the stream's declared "
                      "size and frame count): a larger one is an error naming the sample, before anything is "
                      "allocated for it.")
        .Min(1);
  return AddDecodeArgs(schema, {"sample", "it", "samples"}).Backends({Device::kCpu});
}

class VideoDecoderOp final : public Operator {
 public:
  explicit VideoDecoderOp(const OpSpec& spec)
      : Operator(spec),
        where_(spec.Describe()),
        start_frame_(spec.Arg<int64_t>("start_frame")),
        sequence_length_(spec.Arg<int64_t>("sequence_length")),
        stride_(spec.Arg<int64_t>("stride")),
        max_output_bytes_(spec.Arg<int64_t>("max_output_bytes")) {
    ReadDecodeArgs(spec, limits_, options_);
    options_.max_pixels = limits_.max_pixels;
  }

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    const int n = in.num_samples();
    if (n > 0 && in.dtype() != DType::kUInt8) {
      throw InvalidArgument(where_ + ": expected encoded bytes (uint8), got " + std::string(DTypeName(in.dtype())));
    }
    samples_.assign(static_cast<size_t>(n), Sample{});
    // Indexing reads packets only (no decoding): cheap next to RunCpu, so done here, where the
    // frame count that the output's shape needs is learnt.
    ws.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) PlanSample(in, static_cast<int>(i));
    });
    TensorListDesc video{{}, DType::kUInt8, "FHWC"};
    for (const Sample& s : samples_) {
      video.shapes.push_back(Shape{static_cast<int64_t>(s.frames.size()), s.index->info.height, s.index->info.width, 3});
    }
    return OutputDescs{std::move(video)};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        Sample& sample = samples_[static_cast<size_t>(s)];
        Guarded(in, s, [&] {
          auto decoder = OpenCpuClipDecoder(sample.source, sample.index, limits_, options_);
          decoder->Decode(sample.frames, static_cast<uint8_t*>(out.raw_sample(s)));
        });
      }
    });
    samples_.clear();  // the sources point into this iteration's input
  }

 private:
  struct Sample {
    std::shared_ptr<const ByteSource> source;
    std::shared_ptr<const ClipIndex> index;
    std::vector<int64_t> frames;
  };

  std::string SampleWhere(const TensorListCPU& in, int i) const {
    const SampleSource* source = in.source(i);
    std::string text = where_ + ": sample " + std::to_string(i) + " of " + std::to_string(in.num_samples());
    if (source != nullptr && !source->file.empty()) text += " (file \"" + source->file + "\")";
    return text;
  }

  // Runs `f`, turning its errors into SampleErrors that name the node and sample `i`.
  template <typename F>
  void Guarded(const TensorListCPU& in, int i, F&& f) const {
    try {
      f();
    } catch (const SampleError&) {
      throw;
    } catch (const Error& e) {
      throw SampleError(SampleWhere(in, i) + ": " + e.what(), i, e.what());
    }
  }

  void Fail(const TensorListCPU& in, int i, const std::string& reason) const {
    throw SampleError(SampleWhere(in, i) + ": " + reason, i, reason);
  }

  void PlanSample(const TensorListCPU& in, int i) {
    if (in.shape(i).ndim() != 1) {
      Fail(in, i, "expected a 1-D uint8 sample (one encoded file), got shape " + in.shape(i).ToString());
    }
    const int64_t bytes = in.shape(i).num_elements();
    if (bytes == 0) Fail(in, i, "empty input (0 bytes): expected an encoded video file");
    Sample& sample = samples_[static_cast<size_t>(i)];
    Guarded(in, i, [&] {
      sample.source = std::make_shared<MemorySource>(static_cast<const uint8_t*>(in.raw_sample(i)),
                                                     static_cast<size_t>(bytes),
                                                     "encoded video (" + std::to_string(bytes) + " bytes)");
      Demuxer demuxer(sample.source, limits_);
      sample.index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits_));
    });
    const ClipIndex& index = *sample.index;
    const int64_t total = index.frame_count();
    if (start_frame_ >= total) {
      Fail(in, i, "start_frame " + std::to_string(start_frame_) + " is beyond the end: the video has " +
                      std::to_string(total) + " frames");
    }
    const int64_t count = sequence_length_ > 0 ? sequence_length_ : (total - start_frame_ + stride_ - 1) / stride_;
    const int64_t last = start_frame_ + (count - 1) * stride_;
    if (last >= total) {
      Fail(in, i, "sequence_length " + std::to_string(count) + " at stride " + std::to_string(stride_) + " from frame " +
                      std::to_string(start_frame_) + " needs frame " + std::to_string(last) + ": the video has " +
                      std::to_string(total) + " frames");
    }
    // count <= max_frames (2^22) and width x height <= max_pixels (2^26): no overflow.
    const int64_t frame_bytes = static_cast<int64_t>(index.info.width) * index.info.height * 3;
    if (frame_bytes <= 0 || count > max_output_bytes_ / frame_bytes) {
      Fail(in, i, std::to_string(count) + " frames of " + std::to_string(index.info.width) + "x" +
                      std::to_string(index.info.height) + " RGB are " + std::to_string(count * frame_bytes) +
                      " bytes, more than max_output_bytes (" + std::to_string(max_output_bytes_) + ")");
    }
    sample.frames.resize(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) sample.frames[static_cast<size_t>(k)] = start_frame_ + k * stride_;
  }

  std::string where_;
  int64_t start_frame_, sequence_length_, stride_, max_output_bytes_;
  VideoLimits limits_;
  CpuDecoderOptions options_;
  std::vector<Sample> samples_;  // the current batch's, from Setup to RunCpu
};

}  // namespace

const OpSchema& VideoDecoderSchema() {
  static const OpSchema schema = MakeSchema();
  return schema;
}

std::unique_ptr<Operator> MakeVideoDecoder(const OpSpec& spec) { return std::make_unique<VideoDecoderOp>(spec); }
}  // namespace conveyor::ops::video
