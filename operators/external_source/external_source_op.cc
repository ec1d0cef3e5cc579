// external_source: a batch the application hands in (Pipeline::Feed). The executor binds the fed
// batch as this node's output; the operator itself only describes it.
#include "core/op/registry.h"

namespace conveyor::ops {
namespace {

const OpSchema kExternalSourceSchema =
    OpSchema("external_source")
        .Doc("A batch fed by the application each iteration (Pipeline::Feed, the C API, Python).")
        .Output("output")
        .Arg<DType>("dtype", DType::kUInt8, "The dtype fed batches must have.")
        .Arg<std::string>("layout", "", "The layout fed batches carry (empty: any).")
        .Arg<int64_t>("ndim", -1, "The number of dimensions of each sample (-1: any).")
        .Min(-1)
        .Backends({Device::kCpu, Device::kGpu});

class ExternalSourceOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace&) override {
    throw InvalidArgument(spec().Describe() + ": external_source outputs are fed by the executor (Pipeline::Feed)");
  }
};

const OperatorRegistration<ExternalSourceOp> kRegistration(kExternalSourceSchema);

}  // namespace
}  // namespace conveyor::ops
