// Operators that exist only for the YAML and graph tests: a reader with a required path argument
// and string choices, and a flip with per-sample flags (CPU and GPU, no real kernels needed).
#include "core/op/registry.h"

namespace conveyor::testing {
namespace {

const OpSchema kReaderSchema = OpSchema("test.reader")
                                   .Doc("Pretends to read files.")
                                   .Output("data")
                                   .Output("labels")
                                   .RequiredArg<std::string>("file_root", "Folder to read.")
                                   .Path()
                                   .Arg<std::string>("output_type", "RGB", "Color space.")
                                   .Choices({"RGB", "BGR", "GRAY"})
                                   .Arg<bool>("random_shuffle", false, "Shuffle.")
                                   .Backends({Device::kCpu});

const OpSchema kFlipSchema = OpSchema("test.flip")
                                 .Doc("Pretends to mirror images.")
                                 .Input("images", {"HWC", "CHW"})
                                 .Output("flipped")
                                 .Arg<bool>("horizontal", true, "Mirror along W.", PerSample::kAllowed)
                                 .Arg<bool>("vertical", false, "Mirror along H.", PerSample::kAllowed)
                                 .Arg<std::vector<double>>("mean", std::vector<double>{0.0}, "Means.")
                                 .Arg<DType>("dtype", DType::kUInt8, "Output dtype.")
                                 .Backends({Device::kCpu, Device::kGpu})
                                 .Capturable();

class NoOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace&) override { return {}; }
};

const OperatorRegistration<NoOp> kReader(kReaderSchema);
const OperatorRegistration<NoOp> kFlip(kFlipSchema);

}  // namespace
}  // namespace conveyor::testing
