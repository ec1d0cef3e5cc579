// DevicePtr<T>: a typed device address with the arithmetic a raw pointer has, but which host code
// cannot dereference by mistake. Conversions to and from CUdeviceptr and integers are explicit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.h"

namespace conveyor {

template <typename T>
class DevicePtr {
 public:
  using element_type = T;

  constexpr DevicePtr() = default;
  constexpr DevicePtr(std::nullptr_t) {}
  constexpr explicit DevicePtr(T* ptr) : addr_(reinterpret_cast<uintptr_t>(ptr)) {}
  constexpr explicit DevicePtr(uintptr_t addr) : addr_(addr) {}
  // CUdeviceptr is an unsigned long long; accept it without pulling in cuda.h.
  static constexpr DevicePtr FromAddress(unsigned long long addr) {
    return DevicePtr(static_cast<uintptr_t>(addr));
  }
  template <typename U>
    requires(std::is_convertible_v<U*, T*> && !std::is_same_v<U, T>)
  constexpr DevicePtr(DevicePtr<U> other) : addr_(other.address()) {}

  constexpr T* get() const { return reinterpret_cast<T*>(addr_); }  // for kernel arguments
  constexpr uintptr_t address() const { return addr_; }
  explicit constexpr operator uintptr_t() const { return addr_; }
  explicit constexpr operator unsigned long long() const { return addr_; }  // CUdeviceptr
  explicit constexpr operator bool() const { return addr_ != 0; }

  constexpr bool is_aligned(size_t alignment) const { return alignment != 0 && addr_ % alignment == 0; }
  // The largest power of two dividing the address (capped at 4096); 0 has every alignment.
  constexpr size_t alignment() const {
    if (addr_ == 0) return 4096;
    const uintptr_t low = addr_ & (~addr_ + 1);
    return low > 4096 ? 4096 : static_cast<size_t>(low);
  }

  constexpr DevicePtr& operator+=(std::ptrdiff_t n) { addr_ += n * static_cast<std::ptrdiff_t>(kStride); return *this; }
  constexpr DevicePtr& operator-=(std::ptrdiff_t n) { addr_ -= n * static_cast<std::ptrdiff_t>(kStride); return *this; }
  constexpr DevicePtr& operator++() { return *this += 1; }
  constexpr DevicePtr& operator--() { return *this -= 1; }
  friend constexpr DevicePtr operator+(DevicePtr p, std::ptrdiff_t n) { return p += n; }
  friend constexpr DevicePtr operator+(std::ptrdiff_t n, DevicePtr p) { return p += n; }
  friend constexpr DevicePtr operator-(DevicePtr p, std::ptrdiff_t n) { return p -= n; }
  friend constexpr std::ptrdiff_t operator-(DevicePtr a, DevicePtr b) {
    return (static_cast<std::ptrdiff_t>(a.addr_) - static_cast<std::ptrdiff_t>(b.addr_)) /
           static_cast<std::ptrdiff_t>(kStride);
  }
  // p[i] is the address of element i (a device location, not a value the host can read).
  constexpr DevicePtr operator[](std::ptrdiff_t i) const { return *this + i; }

  friend constexpr bool operator==(DevicePtr a, DevicePtr b) { return a.addr_ == b.addr_; }
  friend constexpr auto operator<=>(DevicePtr a, DevicePtr b) { return a.addr_ <=> b.addr_; }

  // A bounds-checked view for debug builds: index() throws instead of running off the end.
  class Span {
   public:
    constexpr Span(DevicePtr base, size_t size) : base_(base), size_(size) {}
    constexpr size_t size() const { return size_; }
    DevicePtr index(size_t i) const {
      if (i >= size_) {
        throw InvalidArgument("DevicePtr::Span: index " + std::to_string(i) + " out of range for " +
                              std::to_string(size_) + " elements");
      }
      return base_ + static_cast<std::ptrdiff_t>(i);
    }
    constexpr DevicePtr data() const { return base_; }

   private:
    DevicePtr base_;
    size_t size_;
  };
  constexpr Span span(size_t size) const { return Span(*this, size); }

 private:
  static constexpr size_t kStride = [] {
    if constexpr (std::is_void_v<T>) return size_t{1};
    else return sizeof(T);
  }();
  uintptr_t addr_ = 0;
};

}  // namespace conveyor
