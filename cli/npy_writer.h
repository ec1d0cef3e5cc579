// `--save-outputs DIR`: each output batch of each iteration as NumPy .npy files.
//
// | batch                       | files                                              |
// |-----------------------------|----------------------------------------------------|
// | uniform shapes              | DIR/<output>_<iteration:06>.npy, shape [batch, ...] |
// | non-uniform (or empty)      | DIR/<output>_<iteration:06>_<sample:04>.npy each    |
//
// Headers come from operators/readers/npy_format.h (version 1.0, C order), so numpy.load reads
// them. Throws InvalidArgument naming the file when it cannot be written.
#pragma once

#include <string>
#include <vector>

#include "core/tensor/tensor_list.h"

namespace conveyor::cli {

// Returns the paths written.
std::vector<std::string> SaveBatchNpy(const std::string& dir, const std::string& output, int64_t iteration,
                                      const TensorListCPU& batch);

// Creates `dir` (and its parents) when missing; InvalidArgument when that fails.
void MakeDirectories(const std::string& dir);

}  // namespace conveyor::cli
