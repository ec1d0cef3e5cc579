// decoders.video (DALI's fn.decoders.video; CPU and GPU backends): encoded video files handed in as bytes
// (readers.file, external_source) → the frames start_frame, start_frame + stride, ... of the first
// video stream (sequence_length of them, or those before end_frame, or all to the end), padded by
// pad_mode where they run past the video's end, as FHWC uint8 RGB.
//
// | input                 | output                         | arguments                                  |
// |-----------------------|--------------------------------|--------------------------------------------|
// | uint8, 1-D per sample | uint8 [F, H, W, 3] (FHWC) RGB, | start_frame, sequence_length | end_frame,  |
// | (one encoded video),  | H x W the stream's             | stride (per sample too); pad_mode,         |
// | host placement        |                                | fill_value; on_error; max_output_bytes     |
// |                       |                                | (F x H x W x 3, 2 GiB); max_pixels,        |
// |                       |                                | max_frames, decode_timeout_ms              |
//
// Setup demuxes each sample from memory (MemorySource → Demuxer, the path fuzz/video_demux_fuzz
// covers), builds its ClipIndex (packets only, no decoding), picks the frames (frame_selection.h:
// DALI's rules) and checks the output against the limits before anything is allocated. RunCpu
// decodes each distinct frame once, on the pipeline's threads, with the readers' ClipDecoder (same
// frame accuracy: seek to the keyframe before the first frame, decode forward, frames identified by
// timestamp), straight into its first place in the output; padding copies and fills the rest.
// Every error names the node and the sample:
//   op "decoders.video" (dec): sample 2 of 3: start_frame 40 is beyond the end: the video has 20 frames
// on_error: skip (input straight from readers.file): such a sample is replaced through the reader
// (operators/readers/skip_on_error.h); argument errors are never skipped.
// GPU backend (DALI's "mixed"; a decoder with a host phase, docs/executor.md): the same plan; each
// sample decoded by NVDEC straight into the device output (readers.video's GpuClipDecoder: one
// decoder per sample, its frames converted on ws.stream()), or — where NVDEC cannot take the file
// (codec, chroma format, size, no libnvcuvid) — by libavcodec into the slot's pinned staging and
// uploaded, said once; padding is copies on the stream (fill frames from a pinned fill frame).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/operator.h"
#include "core/op/workspace.h"
#include "operators/readers/io/memory_source.h"
#include "operators/readers/skip_on_error.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/decode_args.h"
#include "operators/video/demux.h"
#include "core/memory/buffer.h"
#include "core/tensor/copy.h"
#include "operators/video/frame_selection.h"
#include "operators/video/nvdec/gpu_clip_decoder.h"
#include "operators/video/video_limits.h"
#include "operators/video/video_ops.h"

namespace conveyor::ops::video {
namespace {

constexpr int64_t kMaxFrameArg = 2147483647;  // DALI's int arguments; keeps frame arithmetic in int64
constexpr char kEmpty[] = "empty input (0 bytes): expected an encoded video file";

OpSchema MakeSchema() {
  OpSchema schema("decoders.video");
  schema
      .Doc("Decodes encoded video files given as bytes (MP4/MOV, MKV/WebM, AVI, MPEG-TS, FLV, IVF; H.264, HEVC, "
           "VP9, AV1, MPEG-4 Part 2 and whatever else libavcodec decodes) to FHWC uint8 RGB: every frame of the "
           "first video stream, or the frames from start_frame at `stride` (sequence_length of them, or those "
           "before end_frame), padded by pad_mode past the video's end; frame-accurately, with readers.video's "
           "decoder (B-frames, variable frame rate, non-IDR keyframes). CPU backend: libavcodec; GPU backend "
           "(device: gpu, DALI's mixed): NVDEC into device memory, libavcodec + upload where NVDEC cannot take "
           "a file (said once); docs/video.md.")
      .Input("encoded", {}, {DType::kUInt8}, Placement::kHost,
             "Encoded video files, one 1-D uint8 sample each (readers.file's output); the container is read from "
             "the content, not a name.")
      .Output("video", "uint8 [F, H, W, 3] (FHWC): the frames as RGB.")
      .Arg<int64_t>("start_frame", 0, "The first frame decoded (from 0, in presentation order); must lie in the video.",
                    PerSample::kAllowed)
      .Range(0, kMaxFrameArg)
      .Arg<int64_t>("sequence_length", 0,
                    "Frames per sample (padded by pad_mode past the video's end); 0: every frame from start_frame "
                    "(at `stride`) to the end. Not with end_frame.",
                    PerSample::kAllowed)
      .Range(0, kMaxFrameArg)
      .Arg<int64_t>("end_frame", 0,
                    "When given: the frames [start_frame, end_frame) at `stride` (padded by pad_mode past the "
                    "video's end; greater than start_frame). Not with sequence_length. Not given: to the end.",
                    PerSample::kAllowed)
      .Range(0, kMaxFrameArg)
      .Arg<int64_t>("stride", 1, "Distance between consecutive frames decoded.", PerSample::kAllowed)
      .Range(1, kMaxFrameArg)
      .Arg<std::string>("pad_mode", "constant",
                        "Frames asked past the video's last frame (DALI's names): `none` leaves them out (a shorter "
                        "output); `constant` fills them with fill_value; `edge` / `repeat` show the last frame; "
                        "`reflect_1001` / `symmetric` mirror the video at its end with the last frame repeated "
                        "(ABC -> ABCCBA), `reflect_101` / `reflect` without (ABC -> ABCBA).")
      .Choices(PadModeNames())
      .Arg<std::vector<int64_t>>("fill_value", {0},
                                 "pad_mode constant: the padded frames' colour, one value for R, G and B or three.")
      .Range(0, 255)
      .Arg<std::string>("on_error", "error",
                        "A sample that cannot be demuxed or decoded (truncated, garbage, no frames, too short for "
                        "start_frame, over a limit): `error` stops the pipeline naming the sample and its file; `skip` "
                        "(the input straight from readers.file) drops the file and the reader reads the next one in "
                        "its place, redoing the iteration, so batches stay full and labels aligned; skipped files "
                        "are listed in the pipeline's counters.")
      .Choices({"error", "skip"})
      .Arg<int64_t>("max_output_bytes", int64_t{1} << 31,
                    "Largest output of one sample (frames x height x width x 3 bytes, from the stream's declared "
                    "size and the frames selected): a larger one is an error naming the sample, before anything is "
                    "allocated for it.")
      .Min(1);
  return AddDecodeArgs(schema, {"sample", "it", "samples"}).Backends({Device::kCpu, Device::kGpu});
}

// "sequence_length" / "end_frame" given: set in the spec or fed per sample.
bool Given(const OpSpec& spec, const std::string& name) {
  return spec.HasArg(name) || spec.arg_inputs().count(name) != 0;
}

PadMode PadModeOf(const OpSpec& spec) {
  // The schema's choices are ParsePadMode's names.
  return ParsePadMode(spec.Arg<std::string>("pad_mode")).value_or(PadMode::kConstant);
}

std::array<uint8_t, 3> FillOf(const OpSpec& spec) {
  const std::vector<int64_t> values = spec.Arg<std::vector<int64_t>>("fill_value");  // each in [0, 255]
  if (values.size() == 1) return {static_cast<uint8_t>(values[0]), static_cast<uint8_t>(values[0]),
                                  static_cast<uint8_t>(values[0])};
  if (values.size() == 3) return {static_cast<uint8_t>(values[0]), static_cast<uint8_t>(values[1]),
                                  static_cast<uint8_t>(values[2])};
  throw SpecError(spec, "args.fill_value",
                  "argument \"fill_value\": expected 1 value (R, G and B alike) or 3 (R, G, B), got " +
                      std::to_string(values.size()));
}

class VideoDecoderOp final : public Operator {
 public:
  explicit VideoDecoderOp(const OpSpec& spec)
      : Operator(spec),
        where_(spec.Describe()),
        end_given_(Given(spec, "end_frame")),
        pad_(PadModeOf(spec)),
        fill_(FillOf(spec)),
        max_output_bytes_(spec.Arg<int64_t>("max_output_bytes")) {
    if (end_given_ && Given(spec, "sequence_length")) {
      throw SpecError(spec, "args.end_frame",
                      "arguments \"end_frame\" and \"sequence_length\" both given: a sample's frames end either "
                      "before end_frame or after sequence_length frames (DALI's rule); give one");
    }
    ReadDecodeArgs(spec, limits_, options_);
    options_.max_pixels = limits_.max_pixels;
  }

  void ConnectInput(int input, const OpSpec& producer_spec, Operator* producer, int output) override {
    if (spec().Arg<std::string>("on_error") != "skip") return;
    // An empty file needs no demuxer to be refused: the reader skips it before it enters a batch.
    skip_.Connect(spec(), input, producer_spec, producer, output,
                  [](const uint8_t*, size_t size) { return size == 0 ? std::string(kEmpty) : std::string(); });
  }

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    const int n = in.num_samples();
    if (n > 0 && in.dtype() != DType::kUInt8) {
      throw InvalidArgument(where_ + ": expected encoded bytes (uint8), got " + std::string(DTypeName(in.dtype())));
    }
    samples_.assign(static_cast<size_t>(n), Sample{});
    ReadRequests(ws, in);  // argument errors: never the sample's fault, never skipped
    // Indexing reads packets only (no decoding): cheap next to RunCpu, so done here, where the
    // frame count that the output's shape needs is learnt.
    skip_.Guard(in, [&] { ForEachSample(ws, n, [&](int i) { PlanSample(in, i); }); });
    TensorListDesc video{{}, DType::kUInt8, "FHWC"};
    for (const Sample& s : samples_) {
      video.shapes.push_back(Shape{s.plan.frames(), s.index->info.height, s.index->info.width, 3});
    }
    return OutputDescs{std::move(video)};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    skip_.Guard(in, [&] {
      ForEachSample(ws, in.num_samples(), [&](int s) { DecodeSample(in, s, static_cast<uint8_t*>(out.raw_sample(s))); });
    });
    samples_.clear();  // the sources point into this iteration's input
  }

  void RunGpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const StreamView stream = ws.stream();
    nvdec_.stream->stream.store(static_cast<void*>(stream.get()));
    const int n = in.num_samples();
    HostSlot& host = PrepareHostSlot(ws.slot(), out);
    std::vector<char> on_device(static_cast<size_t>(n), 0);
    skip_.Guard(in, [&] {
      ForEachSample(ws, n, [&](int s) {
        on_device[static_cast<size_t>(s)] =
            DecodeSampleGpu(in, s, static_cast<uint8_t*>(out.raw_sample(s)), host.staging + out.offset(s));
      });
    });
    for (int s = 0; s < n; ++s) {
      const size_t bytes = static_cast<size_t>(out.shape(s).num_elements());
      if (bytes == 0) continue;
      if (on_device[static_cast<size_t>(s)] == 0) {  // decoded and padded on the host
        CopyBytesAsync(out.raw_sample(s), host.staging + out.offset(s), bytes, stream);
        continue;
      }
      auto* video = static_cast<uint8_t*>(out.raw_sample(s));
      const int64_t frame_bytes = static_cast<int64_t>(bytes) / out.shape(s)[0];
      ForEachPaddedFrame(samples_[static_cast<size_t>(s)].plan, [&](int64_t k, int64_t first) {
        const uint8_t* src = first == FramePlan::kFill ? host.fill : video + first * frame_bytes;
        CopyBytesAsync(video + k * frame_bytes, src, static_cast<size_t>(frame_bytes), stream);
      });
    }
    samples_.clear();
  }

 private:
  struct Sample {
    FrameRequest request;
    std::shared_ptr<const ByteSource> source;
    std::shared_ptr<const ClipIndex> index;
    FramePlan plan;
  };

  // f(i) for every sample on ws's threads. When several samples fail, the lowest one's error is
  // thrown, whichever thread finished first: the same message every run (and on_error: skip drops
  // the samples in order).
  template <typename F>
  static void ForEachSample(const Workspace& ws, int n, F&& f) {
    std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
    ws.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        try {
          f(static_cast<int>(i));
        } catch (...) {
          errors[static_cast<size_t>(i)] = std::current_exception();
        }
      }
    });
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

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

  // Each sample's start_frame, sequence_length / end_frame and stride. Values fed per sample get
  // the schema's range checks here (the spec's were checked when it was validated).
  void ReadRequests(const Workspace& ws, const TensorListCPU& in) {
    const SampleArg<int64_t> start(ws, "start_frame"), length(ws, "sequence_length"), end(ws, "end_frame"),
        stride(ws, "stride");
    for (int i = 0; i < in.num_samples(); ++i) {
      FrameRequest& r = samples_[static_cast<size_t>(i)].request;
      r.start = Checked(in, i, start, "start_frame");
      r.sequence_length = Checked(in, i, length, "sequence_length");
      r.stride = Checked(in, i, stride, "stride");
      if (!end_given_) continue;
      r.end = Checked(in, i, end, "end_frame");
      if (*r.end <= r.start) {
        throw InvalidArgument(SampleWhere(in, i) + ": end_frame " + std::to_string(*r.end) +
                              " must be greater than start_frame " + std::to_string(r.start));
      }
    }
  }

  int64_t Checked(const TensorListCPU& in, int i, const SampleArg<int64_t>& arg, const char* name) const {
    const int64_t value = arg(i);
    if (arg.fed()) {
      const std::string bad = VideoDecoderSchema().FindArg(name)->CheckValue(ArgValue(value));
      if (!bad.empty()) throw InvalidArgument(SampleWhere(in, i) + ": argument \"" + name + "\": " + bad);
    }
    return value;
  }

  void PlanSample(const TensorListCPU& in, int i) {
    if (in.shape(i).ndim() != 1) {
      Fail(in, i, "expected a 1-D uint8 sample (one encoded file), got shape " + in.shape(i).ToString());
    }
    const int64_t bytes = in.shape(i).num_elements();
    if (bytes == 0) Fail(in, i, kEmpty);
    Sample& sample = samples_[static_cast<size_t>(i)];
    Guarded(in, i, [&] {
      sample.source = std::make_shared<MemorySource>(static_cast<const uint8_t*>(in.raw_sample(i)),
                                                     static_cast<size_t>(bytes),
                                                     "encoded video (" + std::to_string(bytes) + " bytes)");
      Demuxer demuxer(sample.source, limits_);
      sample.index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits_));
      const ClipIndex& index = *sample.index;
      const int64_t count = SelectedFrameCount(sample.request, pad_, index.frame_count());
      if (count > limits_.max_frames) {
        throw InvalidArgument(std::to_string(count) + " frames asked (the video has " +
                              std::to_string(index.frame_count()) + "), more than max_frames (" +
                              std::to_string(limits_.max_frames) + ")");
      }
      // count <= max_frames (2^22 by default) and width x height <= max_pixels: no overflow.
      const int64_t frame_bytes = static_cast<int64_t>(index.info.width) * index.info.height * 3;
      if (frame_bytes <= 0 || count > max_output_bytes_ / frame_bytes) {
        throw InvalidArgument(std::to_string(count) + " frames of " + std::to_string(index.info.width) + "x" +
                              std::to_string(index.info.height) + " RGB are " + std::to_string(count * frame_bytes) +
                              " bytes, more than max_output_bytes (" + std::to_string(max_output_bytes_) + ")");
      }
      sample.plan = SelectFrames(sample.request, pad_, index.frame_count());
    });
  }

  // Each distinct frame decoded once into its first place of `out` (host or device memory, as
  // the decoder writes).
  static void DecodeFrames(ClipDecoder& decoder, const FramePlan& plan, uint8_t* out) {
    const int64_t frame_bytes = decoder.frame_bytes();
    std::vector<uint8_t*> places;
    places.reserve(plan.first_slot.size());
    for (int64_t slot : plan.first_slot) places.push_back(out + slot * frame_bytes);
    decoder.Decode(plan.decode, places);
  }

  // CPU backend: decoded, then padding fills and copies the rest.
  void DecodeSample(const TensorListCPU& in, int i, uint8_t* out) {
    Sample& sample = samples_[static_cast<size_t>(i)];
    Guarded(in, i, [&] {
      auto decoder = OpenCpuClipDecoder(sample.source, sample.index, limits_, options_);
      DecodeFrames(*decoder, sample.plan, out);
      FillRepeatedFrames(sample.plan, out, decoder->frame_bytes(), fill_);
    });
  }

  // GPU backend: true when NVDEC wrote the frames into `device_out` (padding left to RunGpu);
  // false when the CPU decoder wrote and padded them in `host_out`.
  bool DecodeSampleGpu(const TensorListCPU& in, int i, uint8_t* device_out, uint8_t* host_out) {
    Sample& sample = samples_[static_cast<size_t>(i)];
    bool nvdec = false;
    Guarded(in, i, [&] {
      GpuClipDecoder opened = OpenGpuClipDecoder(sample.source, sample.index, limits_, options_, nvdec_);
      nvdec = opened.nvdec;
      if (!nvdec) NoteFallback(in, i, opened.fallback);
      DecodeFrames(*opened.decoder, sample.plan, nvdec ? device_out : host_out);
      if (!nvdec) FillRepeatedFrames(sample.plan, host_out, opened.decoder->frame_bytes(), fill_);
    });
    return nvdec;
  }

  void NoteFallback(const TensorListCPU& in, int i, const std::string& reason) {
    if (said_fallback_.exchange(true)) return;
    std::fprintf(stderr,
                 "%s: NVDEC not used: %s; decoding such samples on the CPU and uploading them (said once)\n",
                 SampleWhere(in, i).c_str(), reason.c_str());
  }

  // Pinned memory of one executor slot: the CPU fallback's frames (as large as the output) and
  // one fill frame (the largest frame's size so far) of fill_value. Rewritten without waiting: the
  // executor runs a slot's next iteration after its GPU work (docs/executor.md).
  struct HostSlot {
    Buffer staging_buffer, fill_buffer;
    uint8_t* staging = nullptr;
    uint8_t* fill = nullptr;
  };

  HostSlot& PrepareHostSlot(int slot_id, const TensorListGPU& out) {
    HostSlot* slot = nullptr;
    {
      std::lock_guard<std::mutex> lock(slots_mutex_);
      slot = &host_slots_[slot_id];
    }
    size_t largest_frame = 0;
    for (int s = 0; s < out.num_samples(); ++s) {
      const Shape& shape = out.shape(s);
      if (shape.num_elements() > 0) largest_frame = std::max(largest_frame, static_cast<size_t>(shape.num_elements() / shape[0]));
    }
    if (out.nbytes() > 0 && (slot->staging_buffer.empty() || slot->staging_buffer.size() < out.nbytes())) {
      slot->staging_buffer = Buffer::Allocate(MemoryKind::kPinned, out.nbytes());
    }
    if (largest_frame > 0 && (slot->fill_buffer.empty() || slot->fill_buffer.size() < largest_frame)) {
      // fill_value is the node's: the frame is written once, when its buffer is (re)made.
      slot->fill_buffer = Buffer::Allocate(MemoryKind::kPinned, largest_frame);
      auto* fill = static_cast<uint8_t*>(slot->fill_buffer.host_ptr());
      for (size_t b = 0; b + 2 < slot->fill_buffer.size(); b += 3) std::memcpy(fill + b, fill_.data(), 3);
    }
    slot->staging = slot->staging_buffer.empty() ? nullptr : static_cast<uint8_t*>(slot->staging_buffer.host_ptr());
    slot->fill = slot->fill_buffer.empty() ? nullptr : static_cast<uint8_t*>(slot->fill_buffer.host_ptr());
    return *slot;
  }

  std::string where_;
  bool end_given_;
  PadMode pad_;
  std::array<uint8_t, 3> fill_;
  int64_t max_output_bytes_;
  VideoLimits limits_;
  CpuDecoderOptions options_;
  SkipOnError skip_;             // on_error: skip: the reader that replaces rejected samples
  std::vector<Sample> samples_;  // the current batch's, from Setup to RunCpu / RunGpu
  // GPU backend.
  NvdecOptions nvdec_;
  std::atomic<bool> said_fallback_{false};
  std::mutex slots_mutex_;
  std::map<int, HostSlot> host_slots_;
};

}  // namespace

const OpSchema& VideoDecoderSchema() {
  static const OpSchema schema = MakeSchema();
  return schema;
}

std::unique_ptr<Operator> MakeVideoDecoder(const OpSpec& spec) { return std::make_unique<VideoDecoderOp>(spec); }
}  // namespace conveyor::ops::video
