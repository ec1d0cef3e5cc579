// TensorList<Backend>: a batch of samples of possibly different shapes, stored contiguously with
// per-sample byte offsets. A uniform-shape batch is a fast path (is_uniform()), not a special type.
//
//   buffer: [ sample 0 | sample 1 | ... | sample n-1 | (spare capacity) ]
//            ^offset[0] ^offset[1]
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor/tensor.h"

namespace conveyor {

// Where a sample came from (DALI's per-sample source_info): readers set it, operators that pass
// samples through one-to-one carry it (the executor copies it from input 0), and error messages
// name it. `index` is the reader's dataset index (-1: none).
struct SampleSource {
  std::string file;
  int64_t index = -1;
  friend bool operator==(const SampleSource&, const SampleSource&) = default;
};

template <typename Backend>
class TensorList : public ReadyEvent {
 public:
  TensorList() = default;

  // Sets the sample shapes and dtype; reallocates only when the current buffer is too small (so a
  // list reused across iterations stops allocating once it reached its peak size).
  void Resize(const std::vector<Shape>& shapes, DType dtype, std::optional<StreamView> stream = std::nullopt,
              std::optional<MemoryKind> kind = std::nullopt) {
    const MemoryKind k = kind.value_or(buffer_.empty() ? DefaultKind() : buffer_.kind());
    SetShapes(shapes, dtype);
    if (buffer_.empty() || buffer_.size() < total_bytes_ || buffer_.kind() != k) {
      buffer_ = Buffer::Allocate(k, total_bytes_, stream);
    }
  }

  // Places the samples in a caller-provided buffer (a pinned staging slot, a VirtualBuffer).
  void SetBuffer(Buffer buffer, const std::vector<Shape>& shapes, DType dtype) {
    detail::CheckBackendKind(Backend::kIsGpu, buffer.kind());
    SetShapes(shapes, dtype);
    if (buffer.size() < total_bytes_) {
      throw InvalidArgument("TensorList::SetBuffer: the batch needs " + std::to_string(total_bytes_) +
                            " bytes, the buffer has " + std::to_string(buffer.size()));
    }
    buffer_ = std::move(buffer);
  }

  int num_samples() const { return static_cast<int>(shapes_.size()); }
  bool empty() const { return shapes_.empty(); }
  const Shape& shape(int i) const { return shapes_.at(static_cast<size_t>(i)); }
  const std::vector<Shape>& shapes() const { return shapes_; }
  int64_t offset(int i) const { return offsets_.at(static_cast<size_t>(i)); }
  DType dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  const Buffer& buffer() const { return buffer_; }
  size_t nbytes() const { return total_bytes_; }
  bool is_uniform() const {
    for (const Shape& s : shapes_) {
      if (!(s == shapes_.front())) return false;
    }
    return true;
  }

  // Per-sample sources: empty (unknown) or one per sample. Metadata only: Resize and SetBuffer
  // keep it; whoever fills the list sets it (readers) or the executor carries it. Shared and
  // immutable once set, so carrying it from list to list (every node, every iteration) copies a
  // pointer, and a list of an older iteration keeps its own.
  const std::vector<SampleSource>& sources() const {
    static const std::vector<SampleSource> kNone;
    return sources_ ? *sources_ : kNone;
  }
  void set_sources(std::vector<SampleSource> sources) {
    sources_ = std::make_shared<const std::vector<SampleSource>>(std::move(sources));
  }
  const std::shared_ptr<const std::vector<SampleSource>>& shared_sources() const { return sources_; }
  void set_shared_sources(std::shared_ptr<const std::vector<SampleSource>> sources) { sources_ = std::move(sources); }
  // Null when sample i's source is unknown.
  const SampleSource* source(int i) const {
    const std::vector<SampleSource>& all = sources();
    return i >= 0 && static_cast<size_t>(i) < all.size() && !all[static_cast<size_t>(i)].file.empty()
               ? &all[static_cast<size_t>(i)]
               : nullptr;
  }

  // Sample i as a tensor view sharing the buffer and the ready event.
  Tensor<Backend> operator[](int i) const {
    Tensor<Backend> t = Tensor<Backend>::FromBuffer(buffer_, offset(i), shape(i), dtype_, {}, layout_);
    t.set_ready_event(ready_event());
    return t;
  }
  // Host (CPU) or device (GPU) address of sample i.
  void* raw_sample(int i) const {
    char* base = static_cast<char*>(Backend::kIsGpu ? buffer_.device_ptr() : buffer_.host_ptr());
    return base + offset(i);
  }

 private:
  static MemoryKind DefaultKind() { return Backend::kIsGpu ? MemoryKind::kDevice : MemoryKind::kHost; }

  void SetShapes(const std::vector<Shape>& shapes, DType dtype) {
    constexpr size_t kSampleAlignment = 16;  // lets kernels use 16-byte vector loads per sample
    shapes_ = shapes;
    dtype_ = dtype;
    offsets_.resize(shapes.size());
    size_t at = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      for (int64_t d : shapes[i]) {
        if (d < 0) {
          throw InvalidArgument("TensorList: sample " + std::to_string(i) + " has negative extent in shape " +
                                shapes[i].ToString());
        }
      }
      offsets_[i] = static_cast<int64_t>(at);
      at += static_cast<size_t>(shapes[i].num_elements()) * DTypeSize(dtype);
      at = (at + kSampleAlignment - 1) / kSampleAlignment * kSampleAlignment;
    }
    total_bytes_ = at;
  }

  Buffer buffer_;
  std::vector<Shape> shapes_;
  std::vector<int64_t> offsets_;
  size_t total_bytes_ = 0;
  DType dtype_ = DType::kUInt8;
  Layout layout_;
  std::shared_ptr<const std::vector<SampleSource>> sources_;
};

using TensorListCPU = TensorList<CPUBackend>;
using TensorListGPU = TensorList<GPUBackend>;

}  // namespace conveyor
