#include "core/op/operator.h"

#include "core/error.h"

namespace conveyor {

void Operator::RunCpu(Workspace&) {
  throw InvalidArgument(spec_.Describe() + ": has no CPU implementation");
}

void Operator::RunGpu(Workspace&) {
  throw InvalidArgument(spec_.Describe() + ": has no GPU implementation");
}

void Operator::RestoreCheckpoint(const std::string& state) {
  if (state.empty()) return;
  throw InvalidArgument(spec_.Describe() + ": the checkpoint holds state \"" + state +
                        "\" for this node, but its operator keeps none (a checkpoint of another pipeline?)");
}

}  // namespace conveyor
