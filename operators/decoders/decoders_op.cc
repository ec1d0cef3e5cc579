// decoders.image and decoders.image_random_crop: encoded JPEG, PNG, TIFF, WebP, BMP, PNM or JPEG 2000
// bytes → HWC uint8 images.
//
// | input                 | output                         | arguments                               |
// |-----------------------|--------------------------------|-----------------------------------------|
// | uint8, 1-D per sample | uint8 HWC [H, W, C], C = 3     | output_type RGB | BGR | GRAY            |
// | (one encoded file),   | (RGB, BGR) or 1 (GRAY); random | adjust_orientation (EXIF, default true: |
// | host placement        | crop: [window h, window w, C]; | H and W swapped for orientations 5-8)   |
// |                       | H, W of the turned image       | max_pixels (declared size limit, 2^28)  |
// |                       |                                | random crop: random_area,               |
// |                       |                                | random_aspect_ratio, num_attempts       |
//
// Setup parses every header (no decoding), refuses declared sizes over max_pixels before the output
// is allocated (both backends), and draws the crop windows (DecodePlan); RunCpu decodes
// each sample on the CPU stage's pool straight into its output. Bad data → InvalidArgument naming
// the node, the sample and its file ("sample 3 of 256 (file \"/d/x.jpg\", reader index 12)") and
// the reason; see decode_cpu.h for conversions, image_check.h for what on_error: skip catches.
//
// GPU backend: RunGpu drives GpuDecoder (operators/decoders/gpu_decoder.h) from `plan_`, the same
// DecodePlan RunCpu uses, and calls DecodeSampleCpu for the images nvJPEG or nvJPEG2000 refuse.
// JPEG 2000 files go to nvJPEG2000 where the machine has it (jpeg2000_path.h). Images turned by
// their EXIF orientation (!= 1 with adjust_orientation) take the CPU path and are uploaded: no GPU
// path rotates yet.
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "core/op/registry.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/decode_plan.h"
#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/image_check.h"
#include "operators/readers/skip_on_error.h"

namespace conveyor::ops {
namespace {

OpSchema WithDecoderArgs(OpSchema schema) {
  return schema
      .Input("encoded", {}, {DType::kUInt8}, Placement::kHost,
             "Encoded image files (JPEG, PNG, TIFF, WebP, BMP, PNM, JPEG 2000), one 1-D uint8 sample each "
             "(readers.file's output); the format is read from the content, not the name.")
      .Output("images", "Decoded HWC uint8 images.")
      .Arg<std::string>("output_type", "RGB", "Colour format of the output: RGB, BGR or GRAY (one channel).")
      .Choices({"RGB", "BGR", "GRAY"})
      .Arg<int64_t>("max_pixels", kDefaultMaxPixels,
                    "Largest image (height x width as its header declares it) decoded, on both backends and every "
                    "format: a larger one is refused in Setup before anything is allocated for it (an error naming "
                    "the file, or skipped with on_error: skip). The default, 2^28 (16384x16384), admits the largest "
                    "real photographs; one forged header can no longer ask for more than ~0.8 GB of RGB output.")
      .Min(1)
      .Arg<bool>("adjust_orientation", true,
                 "Turn each image as its EXIF orientation says (JPEG's Exif segment, TIFF's Orientation tag, "
                 "WebP's EXIF chunk, PNG's eXIf chunk), so the output is the image as shown: orientations 5-8 swap height and "
                 "width, random-crop windows are drawn in the turned image (DALI's name and default). A malformed "
                 "or out-of-range tag is ignored. false: the pixels as stored. GPU backend: turned images are "
                 "decoded on the CPU and uploaded.")
      .Arg<double>("hw_decoder_load", -1.0,
                   "GPU only: share of the JPEGs the hardware engines accept that goes to them (DALI's name); "
                   "-1 balances engines and CUDA backend from measured throughput.")
      .Range(-1, 1)
      .Arg<int64_t>("hybrid_huffman_threshold", 1000 * 1000,
                    "GPU only: JPEGs the CUDA backend decodes with more pixels than this get their Huffman decoding "
                    "on the GPU, smaller ones on the CPU (DALI's name).")
      .Min(0)
      .Arg<int64_t>("shared_state_threshold", 0,
                    "GPU only: JPEGs the CUDA backend decodes with more pixels than this share two nvJPEG states "
                    "per Huffman kind among the decoder's threads instead of using each thread's own, so a few "
                    "large photos do not grow every thread's buffers to their size: less GPU memory at some speed "
                    "(ImageNet-like files, H200: 2000000 took ~250 MiB off 2.8 GB at ~5% of the images/s). "
                    "0: off.")
      .Min(0)
      .Arg<int64_t>("preallocate_width_hint", 0,
                    "GPU only: the hardware engines' buffers are sized for images at least this wide from the start "
                    "(DALI's name); 0: nvJPEG grows them inside the decode to what the batches need (DALI's default).")
      .Min(0)
      .Arg<int64_t>("preallocate_height_hint", 0, "GPU only: as preallocate_width_hint, for the height.")
      .Min(0)
      .Arg<std::string>("progressive_decoder", "cuda",
                        "GPU only: where progressive JPEGs (which the hardware engines cannot take) are decoded: `cuda` "
                        "(nvJPEG's CUDA backend) or `cpu` (libjpeg-turbo on the pipeline's threads, then uploaded).")
      .Choices({"cpu", "cuda"})
      .Arg<std::string>("on_error", "error",
                        "A corrupt, truncated or unreadable file: `error` stops the pipeline with the file's name; "
                        "`skip` drops it and the reader (the input must come straight from readers.file) reads the "
                        "next file in its place, so batches stay full and labels aligned; skipped files are listed "
                        "in the pipeline's counters. Damage only the decode finds makes the executor redo the "
                        "iteration with the file replaced (docs/decoding.md).")
      .Choices({"error", "skip"})
      .Backends({Device::kCpu, Device::kGpu});
}

const OpSchema kImageSchema =
    WithDecoderArgs(OpSchema("decoders.image")
                        .Doc("Decodes images to HWC uint8: JPEG (baseline, progressive, arithmetic; 4:4:4, 4:2:2, "
                             "4:2:0, grayscale, CMYK/YCCK), PNG (1- to 16-bit, gray/RGB/palette), TIFF, WebP, BMP, "
                             "PNM (P1-P6) and JPEG 2000, chosen from the content; alpha dropped, samples scaled to 8 "
                             "bits, EXIF orientation applied (adjust_orientation)."));

const OpSchema kRandomCropSchema =
    WithDecoderArgs(OpSchema("decoders.image_random_crop")
                        .Doc("Decodes only a random window of each image (DALI's/torchvision's RandomResizedCrop "
                             "window: area fraction and aspect ratio drawn per sample, centre-crop fallback); every "
                             "format decoders.image takes (JPEG including CMYK, PNG, TIFF, WebP, BMP, PNM, JPEG 2000), "
                             "the window drawn in the EXIF-oriented image."))
        .Arg<std::vector<double>>("random_area", {0.08, 1.0},
                                  "Range [lo, hi] of the window's area as a fraction of the image's.")
        .Arg<std::vector<double>>("random_aspect_ratio", {3.0 / 4.0, 4.0 / 3.0},
                                  "Range [lo, hi] of the window's aspect ratio (width / height).")
        .Arg<int64_t>("num_attempts", 10, "Draws before falling back to a centred crop.")
        .Min(1);

class ImageDecoderOp : public Operator {
 public:
  ImageDecoderOp(const OpSpec& spec, bool random_crop)
      : Operator(spec),
        color_(ParseOutputColor(spec.Arg<std::string>("output_type"))),
        adjust_orientation_(spec.Arg<bool>("adjust_orientation")),
        max_pixels_(spec.Arg<int64_t>("max_pixels")) {
    if (random_crop) {
      crop_ = MakeRandomCropParams(spec.Arg<std::vector<double>>("random_area"),
                                   spec.Arg<std::vector<double>>("random_aspect_ratio"),
                                   static_cast<int>(spec.Arg<int64_t>("num_attempts")), spec.Describe());
    }
  }

  // on_error: skip — the reader that feeds us checks every file (image_check.h) before it enters
  // a batch and reads another in place of each one that fails; nothing else can keep the batch
  // full with its labels aligned, so any other producer is refused.
  void ConnectInput(int input, const OpSpec& producer_spec, Operator* producer, int output) override {
    if (input != 0 || spec().Arg<std::string>("on_error") != "skip") return;
    const int64_t max_pixels = max_pixels_;  // the same limit as Setup's, so skip drops what it would refuse
    skip_.Connect(spec(), input, producer_spec, producer, output,
                  [max_pixels](const uint8_t* data, size_t size) { return CheckEncodedImage(data, size, max_pixels); });
  }

  OutputDescs Setup(const Workspace& ws) override {
    return Rejecting(ws, [&] {
      plan_ = PlanBatch(ws, ws.InputCpu(0), color_, crop_, adjust_orientation_, max_pixels_);
      return OutputDescs{plan_.Desc()};
    });
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    Rejecting(ws, [&] {
      ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int s = static_cast<int>(i);
          DecodeSampleCpu(in, s, plan_, static_cast<uint8_t*>(out.raw_sample(s)));
        }
      });
    });
  }

  // GPU backend: Setup's plan (headers, windows) drives GpuDecoder; its host phases run on
  // ws.ParallelFor, its device phases on ws.stream(). Not capturable (see gpu_decoder.h).
  void RunGpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    if (gpu_ == nullptr) {
      GpuDecoderOptions options;
      options.color = color_ == OutputColor::kRgb   ? DecodeColor::kRgb
                      : color_ == OutputColor::kBgr ? DecodeColor::kBgr
                                                    : DecodeColor::kGray;
      options.hw_load = spec().Arg<double>("hw_decoder_load");
      options.hybrid_huffman_threshold = spec().Arg<int64_t>("hybrid_huffman_threshold");
      options.cuda_shared_pixels = spec().Arg<int64_t>("shared_state_threshold");
      options.preallocate_width_hint = spec().Arg<int64_t>("preallocate_width_hint");
      options.preallocate_height_hint = spec().Arg<int64_t>("preallocate_height_hint");
      options.progressive = ParseProgressiveRoute(spec().Arg<std::string>("progressive_decoder"),
                                                  spec().Describe() + ": argument \"progressive_decoder\"");
      gpu_ = std::make_unique<GpuDecoder>(options);
      gpu_ready_.store(gpu_.get(), std::memory_order_release);
    }
    const int n = in.num_samples();
    samples_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const ImageInfo& info = plan_.infos[i];
      // nvJPEG has no arithmetic decoding, and CMYK/YCCK JPEGs are not given to it (so both
      // backends convert them with one formula, decode_cpu.h's): those take the CPU path and are
      // uploaded, like every other format; the decoder's router sends each image to its path from
      // these facts (decode_route.h). Images turned by their EXIF orientation too: the CPU path
      // decodes the stored window and turns it (no GPU path rotates yet).
      const bool nvjpeg = info.format == ImageFormat::kJpeg && !info.arithmetic && info.components != 4 &&
                          plan_.orientations[i] == 1;
      const bool nvjpeg2k = info.format == ImageFormat::kJpeg2000 && plan_.orientations[i] == 1;
      samples_[i] = GpuDecodeSample{static_cast<const uint8_t*>(in.raw_sample(i)),
                                    static_cast<size_t>(in.shape(i).num_elements()),
                                    nvjpeg,
                                    info.height,
                                    info.width,
                                    plan_.windows[i],
                                    static_cast<uint8_t*>(out.raw_sample(i)),
                                    info.subsampling,
                                    info.progressive,
                                    nvjpeg2k,
                                    info.jpeg_common_layout};
    }
    Rejecting(ws, [&] {
      gpu_->Decode(
          samples_, ws, [&](int i, uint8_t* dst) { DecodeSampleCpu(in, i, plan_, dst); },
          [n, &in](int i) {
            const std::string source = SourceText(in, i);
            return "of " + std::to_string(n) + (source.empty() ? "" : ", " + source);
          },
          plan_.where);
    });
  }

  // GPU backend, once RunGpu made the decoder: shows it a later batch (the decoder starts its
  // costliest photos early, GpuDecoderOptions::ahead_cost) with the windows Setup will draw for it
  // (PlanWindow, as PlanBatch). Files whose header or structure fails are left to Setup to report.
  void LookAhead(const Workspace& ws) override {
    GpuDecoder* gpu = gpu_ready_.load(std::memory_order_acquire);
    if (gpu == nullptr || !gpu->ahead_enabled()) return;
    const TensorListCPU& in = ws.InputCpu(0);
    const int n = in.num_samples();
    if (n == 0 || in.dtype() != DType::kUInt8) return;
    std::vector<GpuDecodeSample> samples(static_cast<size_t>(n));
    std::vector<ImageInfo> infos(static_cast<size_t>(n));
    // Headers on this thread (the CPU stage's, which runs ahead of the GPU stage), leaving the
    // pool's threads asleep.
    for (int i = 0; i < n; ++i) {
      if (in.shape(i).ndim() != 1) continue;
      const auto* data = static_cast<const uint8_t*>(in.raw_sample(i));
      const size_t size = static_cast<size_t>(in.shape(i)[0]);
      ImageInfo info;
      try {
        info = ParseImageInfo(data, size, max_pixels_);
      } catch (const InvalidArgument&) {
        continue;
      }
      const int orientation = adjust_orientation_ ? info.orientation : 1;
      if (info.format != ImageFormat::kJpeg || info.arithmetic || info.components == 4 || orientation != 1) continue;
      samples[static_cast<size_t>(i)] =
          GpuDecodeSample{data, size, true, info.height, info.width, PlanWindow(ws, i, info, 1, crop_), nullptr,
                          info.subsampling, info.progressive, false, info.jpeg_common_layout};
      infos[static_cast<size_t>(i)] = info;
    }
    gpu->DecodeAhead(
        ws.iteration(), samples,
        [&](int i) {
          const GpuDecodeSample& s = samples[static_cast<size_t>(i)];
          try {
            return CheckImageStructure(s.data, s.size, infos[static_cast<size_t>(i)]).empty();
          } catch (const InvalidArgument&) {
            return false;
          }
        },
        spec().Describe());
  }

  // on_error: skip for what only Setup's plan or the decode itself finds (damaged entropy data, a
  // header the reader's check passed): skip_on_error.h. Without skip the SampleError goes on as it is.
  template <typename F>
  auto Rejecting(const Workspace& ws, F&& f) -> decltype(f()) {
    return skip_.Guard(ws.InputCpu(0), std::forward<F>(f));
  }

  // Images per path and fallbacks, for tests and benchmarks (zeros before the first GPU run).
  GpuDecoderCounters gpu_counters() const { return gpu_ ? gpu_->counters() : GpuDecoderCounters{}; }

 private:
  OutputColor color_;
  bool adjust_orientation_;
  int64_t max_pixels_;
  std::optional<RandomCropParams> crop_;
  SkipOnError skip_;  // on_error: skip: the reader that replaces rejected samples
  std::unique_ptr<GpuDecoder> gpu_;
  std::atomic<GpuDecoder*> gpu_ready_{nullptr};  // gpu_ once made: LookAhead runs on another thread
  std::vector<GpuDecodeSample> samples_;
  DecodePlan plan_;  // the current batch's, from Setup to Run
};

// The registry constructs an operator from its spec alone: one subclass per schema.
class ImageOp final : public ImageDecoderOp {
 public:
  explicit ImageOp(const OpSpec& spec) : ImageDecoderOp(spec, /*random_crop=*/false) {}
};

class RandomCropOp final : public ImageDecoderOp {
 public:
  explicit RandomCropOp(const OpSpec& spec) : ImageDecoderOp(spec, /*random_crop=*/true) {}
};

const OperatorRegistration<ImageOp> kImageRegistration(kImageSchema);
const OperatorRegistration<RandomCropOp> kRandomCropRegistration(kRandomCropSchema);

}  // namespace
}  // namespace conveyor::ops
