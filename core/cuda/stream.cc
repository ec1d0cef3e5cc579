#include "core/cuda/stream.h"

#include <mutex>
#include <string>
#include <unordered_set>

#include "core/cuda/check.h"
#include "core/error.h"

namespace conveyor::cuda {

StreamView::StreamView(cudaStream_t stream) : stream_(stream) {
  if (stream == nullptr) {
    throw InvalidArgument(
        "StreamView: expected a stream handle, got 0 (the legacy default stream); use "
        "StreamView::Legacy() if that is really meant");
  }
}

StreamView StreamView::Legacy() { return StreamView(cudaStreamLegacy, Unchecked{}); }
StreamView StreamView::PerThread() { return StreamView(cudaStreamPerThread, Unchecked{}); }
bool StreamView::is_legacy() const { return stream_ == cudaStreamLegacy; }
bool StreamView::is_per_thread() const { return stream_ == cudaStreamPerThread; }

void StreamView::Synchronize() const { CONVEYOR_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

bool StreamView::Query() const {
  const cudaError_t status = cudaStreamQuery(stream_);
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  CONVEYOR_CUDA_CHECK(status);
  return true;
}

namespace {
// Handles of streams we created and destroyed; a handle the driver hands out again is removed.
struct DestroyedStreams {
  std::mutex mutex;
  std::unordered_set<cudaStream_t> handles;
};
DestroyedStreams& Destroyed() {
  static auto* d = new DestroyedStreams();  // leaked: buffers may be released during exit
  return *d;
}
}  // namespace

bool IsDestroyedStream(cudaStream_t stream) {
  DestroyedStreams& d = Destroyed();
  std::lock_guard lock(d.mutex);
  return d.handles.count(stream) != 0;
}

void StreamTraits::Destroy(cudaStream_t stream) noexcept {
  // Wait for the stream's work so that whatever was ordered on it (buffer releases) is idle.
  CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream));
  {
    DestroyedStreams& d = Destroyed();
    std::lock_guard lock(d.mutex);
    d.handles.insert(stream);
  }
  CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream));
}

Stream Stream::Create(int priority) {
  cudaStream_t s = nullptr;
  CONVEYOR_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  DestroyedStreams& d = Destroyed();
  std::lock_guard lock(d.mutex);
  d.handles.erase(s);
  return Stream(s);
}

std::optional<StreamView> DecodeInteropStream(int64_t code) {
  if (code == -1) return std::nullopt;
  if (code == 1) return StreamView::Legacy();
  if (code == 2) return StreamView::PerThread();
  if (code == 0) {
    throw InteropError(
        "stream: expected -1 (no sync), 1 (legacy default), 2 (per-thread default) or a stream "
        "handle, got 0, which the DLPack and CUDA Array Interface specs disallow");
  }
  if (code < 0) {
    throw InteropError("stream: expected -1, 1, 2 or a stream handle, got negative value " +
                       std::to_string(code));
  }
  return StreamView(reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(code)));
}

int64_t EncodeInteropStream(StreamView stream) {
  if (stream.is_legacy()) return 1;
  if (stream.is_per_thread()) return 2;
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(stream.get()));
}

}  // namespace conveyor::cuda
