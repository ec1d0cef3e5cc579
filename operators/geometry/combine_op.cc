// transforms.combine: DALI's operator for two 2-D affine matrices per sample (chain nodes for
// more): the result applies input_0 first, then input_1 (reverse_order: input_1 first).
//
// | inputs                          | output                   |
// |---------------------------------|--------------------------|
// | input_0, input_1: float32,      | float32 [2, 3] per       |
// | [2, 3] or [6] per sample        | sample (transform_op.h)  |
#include "core/op/registry.h"
#include "operators/geometry/transform_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kSchema =
    OpSchema("transforms.combine")
        .Doc("Combines two affine matrices per sample: the result applies input_0 first, then input_1 "
             "(reverse_order: input_1 first), as a float32 [2, 3] per sample.")
        .Input("input_0", {}, {DType::kFloat32}, Placement::kOpDevice, "float32 [2, 3] (or [6]) per sample.")
        .Input("input_1", {}, {DType::kFloat32}, Placement::kOpDevice, "float32 [2, 3] (or [6]) per sample.")
        .Output("matrix", "float32 [2, 3] per sample, row-major.")
        .Arg<bool>("reverse_order", false, "false: input_1 is applied after input_0; true: before it.")
        .Backends({Device::kCpu});

class CombineOp final : public Operator {
 public:
  explicit CombineOp(const OpSpec& spec) : Operator(spec), reverse_order_(spec.Arg<bool>("reverse_order")) {}

  OutputDescs Setup(const Workspace& ws) override {
    const int n = static_cast<int>(ws.InputDesc(0).shapes.size());
    for (int input = 0; input < 2; ++input) {
      const TensorListDesc d = ws.InputDesc(input);
      const std::string where = spec().Describe() + ": input " + std::to_string(input) + " (input_" +
                                std::to_string(input) + ")";
      if (d.dtype != DType::kFloat32) {
        throw InvalidArgument(where + ": expected dtype float32, got " + std::string(DTypeName(d.dtype)));
      }
      if (static_cast<int>(d.shapes.size()) != n) {
        throw InvalidArgument(where + ": expected " + std::to_string(n) + " samples (as input 0), got " +
                              std::to_string(d.shapes.size()));
      }
      for (size_t i = 0; i < d.shapes.size(); ++i) {
        const Shape& s = d.shapes[i];
        if (s != Shape{2, 3} && s != Shape{6}) {
          throw InvalidArgument(where + ": sample " + std::to_string(i) + " has shape " + s.ToString() +
                                ", expected (2, 3) or (6,) (a 2-D affine matrix)");
        }
      }
    }
    return {{std::vector<Shape>(static_cast<size_t>(n), Shape{2, 3}), DType::kFloat32, {}}};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& first = ws.InputCpu(reverse_order_ ? 1 : 0);
    const TensorListCPU& second = ws.InputCpu(reverse_order_ ? 0 : 1);
    TensorListCPU& out = ws.OutputCpu(0);
    for (int i = 0; i < out.num_samples(); ++i) {
      StoreMatrix(Load(second, i).After(Load(first, i)), static_cast<float*>(out.raw_sample(i)));
    }
  }

 private:
  static Affine2D Load(const TensorListCPU& list, int sample) {
    const float* v = static_cast<const float*>(list.raw_sample(sample));
    Affine2D m;
    for (size_t j = 0; j < 6; ++j) m.m[j] = v[j];
    return m;
  }

  bool reverse_order_;
};

const OperatorRegistration<CombineOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
