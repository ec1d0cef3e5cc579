// UniqueHandle: the one move-only owner for every CUDA handle (stream, event, graph, graph exec).
#pragma once

#include <utility>

namespace conveyor::cuda {

// Traits supply `using Handle = ...;` and `static void Destroy(Handle) noexcept;`.
template <typename Traits>
class UniqueHandle {
 public:
  using Handle = typename Traits::Handle;

  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) : handle_(handle) {}
  ~UniqueHandle() { reset(); }

  // Copying disallowed: one handle, one owner.
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }

  // A temporary's handle must not escape: it would dangle as soon as the statement ends.
  Handle get() const& { return handle_; }
  Handle get() const&& = delete;
  Handle release() { return std::exchange(handle_, Handle{}); }
  explicit operator bool() const { return handle_ != Handle{}; }

  void reset() {
    if (handle_ != Handle{}) Traits::Destroy(std::exchange(handle_, Handle{}));
  }

 private:
  Handle handle_{};
};

}  // namespace conveyor::cuda
