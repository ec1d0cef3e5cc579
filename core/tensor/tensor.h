// TensorCPU / TensorGPU: a typed, shaped, possibly strided view of a Buffer, plus the event that
// marks when its data is ready on the stream that wrote it.
//
// | backend   | memory kinds accepted          | raw_data() is            |
// |-----------|--------------------------------|--------------------------|
// | TensorCPU | host, pinned, managed          | a host address           |
// | TensorGPU | device, managed, pinned        | a device address         |
//
// Copies of a tensor share its Buffer and its ready event (views, not deep copies).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/cuda/event.h"
#include "core/memory/buffer.h"
#include "core/tensor/dtype.h"
#include "core/tensor/ready_event.h"
#include "core/tensor/shape.h"

namespace conveyor {

struct CPUBackend {
  static constexpr bool kIsGpu = false;
  static constexpr const char* kName = "cpu";
};
struct GPUBackend {
  static constexpr bool kIsGpu = true;
  static constexpr const char* kName = "gpu";
};

namespace detail {
// Non-template checks shared by both backends (tensor.cc).
void CheckBackendKind(bool gpu, MemoryKind kind);
void CheckFits(const Buffer& buffer, int64_t byte_offset, const Shape& shape, const Shape& strides,
               DType dtype);
void CheckWritable(bool read_only, const char* what);
void CheckDType(DType have, DType want);
}  // namespace detail

template <typename Backend>
class Tensor : public ReadyEvent {
 public:
  Tensor() = default;

  // A new contiguous tensor. Default kind: device for TensorGPU, host for TensorCPU.
  static Tensor Empty(const Shape& shape, DType dtype, std::optional<StreamView> stream = std::nullopt,
                      Layout layout = {}, std::optional<MemoryKind> kind = std::nullopt) {
    const MemoryKind k = kind.value_or(Backend::kIsGpu ? MemoryKind::kDevice : MemoryKind::kHost);
    Buffer b = Buffer::Allocate(k, static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype), stream);
    return FromBuffer(std::move(b), 0, shape, dtype, {}, std::move(layout));
  }

  // A view of `buffer`; strides in elements (empty: row-major). Throws InvalidArgument when the
  // view would reach outside the buffer or the memory kind does not suit the backend.
  static Tensor FromBuffer(Buffer buffer, int64_t byte_offset, const Shape& shape, DType dtype,
                           Shape strides = {}, Layout layout = {}, bool read_only = false) {
    detail::CheckBackendKind(Backend::kIsGpu, buffer.kind());
    if (strides.empty() && shape.ndim() > 0) strides = RowMajorStrides(shape);
    detail::CheckFits(buffer, byte_offset, shape, strides, dtype);
    Tensor t;
    t.buffer_ = std::move(buffer);
    t.byte_offset_ = byte_offset;
    t.shape_ = shape;
    t.strides_ = strides;
    t.dtype_ = dtype;
    t.layout_ = std::move(layout);
    t.read_only_ = read_only;
    return t;
  }

  const Buffer& buffer() const { return buffer_; }
  int64_t byte_offset() const { return byte_offset_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements
  DType dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  bool read_only() const { return read_only_; }
  void set_read_only(bool ro) { read_only_ = ro; }
  int ndim() const { return shape_.ndim(); }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t nbytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }
  MemoryKind memory_kind() const { return buffer_.kind(); }
  int device() const { return buffer_.device(); }
  bool is_contiguous() const { return shape_.ndim() == 0 || strides_ == RowMajorStrides(shape_) || num_elements() <= 1; }

  // Host address (TensorCPU) or device address (TensorGPU) of the first element.
  const void* raw_data() const { return Base(); }
  void* raw_mutable_data() {
    detail::CheckWritable(read_only_, "raw_mutable_data");
    return Base();
  }
  template <typename T>
  const T* data() const {
    detail::CheckDType(dtype_, DTypeOf<T>::value);
    return static_cast<const T*>(Base());
  }
  template <typename T>
  T* mutable_data() {
    detail::CheckWritable(read_only_, "mutable_data");
    detail::CheckDType(dtype_, DTypeOf<T>::value);
    return static_cast<T*>(Base());
  }

 private:
  void* Base() const {
    if (buffer_.empty()) return nullptr;
    char* base = static_cast<char*>(Backend::kIsGpu ? buffer_.device_ptr() : buffer_.host_ptr());
    return base + byte_offset_;
  }

  Buffer buffer_;
  int64_t byte_offset_ = 0;
  Shape shape_;
  Shape strides_;
  DType dtype_ = DType::kUInt8;
  Layout layout_;
  bool read_only_ = false;
};

using TensorCPU = Tensor<CPUBackend>;
using TensorGPU = Tensor<GPUBackend>;

}  // namespace conveyor
