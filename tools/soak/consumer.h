// The soak's consumer: reads every byte of an output batch on the consumer's stream (what a
// training step's first layer does) and folds it into a device checksum, so the pipeline's
// outputs are really consumed and ordered through PipelineOutputs::WaitOn.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::tools {
// *checksum += sum of the 32-bit words of [data, data + bytes) (a tail shorter than a word is
// read byte by byte); `data` 4-byte aligned, device-accessible.
void ConsumeGpu(const void* data, size_t bytes, unsigned long long* checksum, cuda::StreamView stream);
}  // namespace conveyor::tools
