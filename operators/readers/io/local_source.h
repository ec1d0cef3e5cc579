// The local-file ByteSource (pread on one descriptor); OpenByteSource picks it for paths.
#pragma once

#include <memory>
#include <string>

#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {

std::unique_ptr<ByteSource> OpenLocalSource(const std::string& path);

}  // namespace conveyor::ops
