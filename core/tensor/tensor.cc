#include "core/tensor/tensor.h"

#include "core/error.h"

namespace conveyor::detail {

void CheckBackendKind(bool gpu, MemoryKind kind) {
  if (gpu && kind == MemoryKind::kHost) {
    throw InvalidArgument("TensorGPU: expected device, managed or pinned memory, got pageable host memory");
  }
  if (!gpu && kind == MemoryKind::kDevice) {
    throw InvalidArgument("TensorCPU: expected host, pinned or managed memory, got device memory");
  }
}

void CheckFits(const Buffer& buffer, int64_t byte_offset, const Shape& shape, const Shape& strides,
               DType dtype) {
  if (strides.ndim() != shape.ndim()) {
    throw InvalidArgument("tensor: expected " + std::to_string(shape.ndim()) + " strides for shape " +
                          shape.ToString() + ", got " + std::to_string(strides.ndim()));
  }
  for (int64_t d : shape) {
    if (d < 0) throw InvalidArgument("tensor: negative extent in shape " + shape.ToString());
  }
  if (byte_offset < 0) throw InvalidArgument("tensor: negative byte offset " + std::to_string(byte_offset));
  if (shape.num_elements() == 0) return;
  // Lowest and highest element reachable through the strides (strides may be negative).
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < shape.ndim(); ++i) {
    const int64_t span = (shape[i] - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t size = static_cast<int64_t>(DTypeSize(dtype));
  const int64_t first = byte_offset + lo * size;
  const int64_t last = byte_offset + (hi + 1) * size;
  if (first < 0 || last > static_cast<int64_t>(buffer.size())) {
    throw InvalidArgument("tensor: shape " + shape.ToString() + " with strides " + strides.ToString() +
                          " of " + std::string(DTypeName(dtype)) + " at byte offset " +
                          std::to_string(byte_offset) + " spans bytes [" + std::to_string(first) + ", " +
                          std::to_string(last) + "), outside the " + std::to_string(buffer.size()) +
                          "-byte buffer");
  }
}

void CheckWritable(bool read_only, const char* what) {
  if (read_only) {
    throw InvalidArgument(std::string("tensor: ") + what +
                          " on a read-only tensor (imported read-only); copy it to write");
  }
}

void CheckDType(DType have, DType want) {
  if (have != want) {
    throw InvalidArgument("tensor: expected dtype " + std::string(DTypeName(want)) + ", got " +
                          std::string(DTypeName(have)));
  }
}

}  // namespace conveyor::detail
