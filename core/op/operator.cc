#include "core/op/operator.h"

#include "core/error.h"

namespace conveyor {

void Operator::RunCpu(Workspace&) {
  throw InvalidArgument(spec_.Describe() + ": has no CPU implementation");
}

void Operator::RunGpu(Workspace&) {
  throw InvalidArgument(spec_.Describe() + ": has no GPU implementation");
}

}  // namespace conveyor
