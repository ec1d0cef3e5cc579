// The base of the transforms.* operators (DALI's affine-transform generators): each makes one 2-D
// affine matrix per sample on the CPU, float32 [2, 3] row-major (affine_matrix.h), for warp_affine's
// `matrix`, coord_transform's `MT` or another transforms.* node.
//
// | output    | per sample     | composition with `transform` (DALI's optional input, fed as $node) |
// |-----------|----------------|---------------------------------------------------------------------|
// | transform | float32 [2, 3] | reverse_order false (default): out = this ∘ transform (this applied |
// |           |                | after it); true: out = transform ∘ this                             |
//
// The matrices are computed in double in Setup (where bad arguments are reported, naming the node,
// the argument and the sample) and written as float32 by RunCpu.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "core/op/workspace.h"
#include "operators/geometry/affine_matrix.h"

namespace conveyor::ops {

// Adds `transform` and `reverse_order`, the output and the CPU backend to a transforms.* schema.
OpSchema& AddTransformArgs(OpSchema& schema);

// Writes one matrix as 6 float32 values.
void StoreMatrix(const Affine2D& m, float* out);

class TransformOp : public Operator {
 public:
  explicit TransformOp(const OpSpec& spec);

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;

 protected:
  // This operator's own matrix for every sample of the batch (`n` samples).
  virtual std::vector<Affine2D> Define(const Workspace& ws, int n) const = 0;

  // A point or vector argument for one sample: exactly 2 finite values (x, y).
  std::vector<double> Pair(const std::string& name, const std::vector<double>& values, int sample) const;
  // The same, or nullopt for [] (an optional argument left out).
  std::optional<std::vector<double>> OptionalPair(const std::string& name, const std::vector<double>& values,
                                                  int sample) const;
  // `m` about `center` when one is given for the sample (center argument `name`).
  Affine2D AboutCenter(const Affine2D& m, const std::vector<double>& center, int sample) const;
  // `op "transforms.shear" (s): argument "angles"` — a message prefix.
  std::string ArgWhere(const std::string& name) const;
  static std::string AtSample(int sample) { return " at sample " + std::to_string(sample); }

 private:
  bool reverse_order_;
  std::vector<Affine2D> matrices_;  // this iteration's, from Setup
};

}  // namespace conveyor::ops
