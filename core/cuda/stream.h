// Stream owns a non-blocking CUDA stream; StreamView borrows one.
//
// No work may reach the legacy default stream by accident: a StreamView cannot be built from 0 or
// nullptr, and the special interop streams must be named (StreamView::Legacy(), ::PerThread()).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

#include "core/cuda/handle.h"

namespace conveyor::cuda {

class StreamView {
 public:
  // Throws InvalidArgument for a null handle (that would be the legacy default stream).
  explicit StreamView(cudaStream_t stream);
  StreamView(std::nullptr_t) = delete;
  StreamView(int) = delete;

  // The legacy default stream and the per-thread default stream, for interop producers only.
  static StreamView Legacy();
  static StreamView PerThread();

  cudaStream_t get() const { return stream_; }
  bool is_legacy() const;
  bool is_per_thread() const;

  // Host-blocking wait; only for tests, tools and shutdown paths.
  void Synchronize() const;
  // True when every piece of work queued so far has finished.
  bool Query() const;

  friend bool operator==(StreamView a, StreamView b) { return a.stream_ == b.stream_; }

 private:
  struct Unchecked {};
  StreamView(cudaStream_t stream, Unchecked) : stream_(stream) {}
  cudaStream_t stream_;
};

struct StreamTraits {
  using Handle = cudaStream_t;
  static void Destroy(cudaStream_t stream) noexcept;
};

class Stream {
 public:
  // Always cudaStreamNonBlocking, so it never serialises with the legacy default stream.
  // Lower numbers are higher priority (CUDA's convention); 0 is the default priority.
  static Stream Create(int priority = 0);

  Stream() = default;
  StreamView view() const& { return StreamView(handle_.get()); }
  StreamView view() const&& = delete;
  cudaStream_t get() const& { return handle_.get(); }
  cudaStream_t get() const&& = delete;
  explicit operator bool() const { return static_cast<bool>(handle_); }
  void Synchronize() const { view().Synchronize(); }

 private:
  explicit Stream(cudaStream_t s) : handle_(s) {}
  UniqueHandle<StreamTraits> handle_;
};

// True when `stream` was created by Stream::Create and has since been destroyed. A Stream's
// destructor first waits for the stream's work, so memory whose release was ordered on a destroyed
// stream is idle and may be released without ordering (Buffer relies on this; see buffer.cc).
bool IsDestroyedStream(cudaStream_t stream);

// Decodes a stream code from DLPack's __dlpack__(stream=...) or the CUDA Array Interface:
//   -1 → std::nullopt (no synchronisation requested), 1 → legacy default, 2 → per-thread default,
//   any other positive value → that cudaStream_t. 0 and other negatives throw InteropError.
std::optional<StreamView> DecodeInteropStream(int64_t code);

// The inverse, for exporting: legacy → 1, per-thread → 2, otherwise the handle's value.
int64_t EncodeInteropStream(StreamView stream);

}  // namespace conveyor::cuda
