// Where memory lives.
#pragma once

#include <string_view>

namespace conveyor {

enum class MemoryKind {
  kHost,     // pageable host memory
  kPinned,   // page-locked host memory, mapped into the device address space
  kDevice,   // device memory
  kManaged,  // CUDA managed (unified) memory
};

std::string_view MemoryKindName(MemoryKind kind);

// Whether a kernel may dereference this kind's memory (through Buffer::device_ptr()).
constexpr bool IsDeviceAccessible(MemoryKind kind) { return kind != MemoryKind::kHost; }
// Whether host code may dereference this kind's memory (through Buffer::host_ptr()).
constexpr bool IsHostAccessible(MemoryKind kind) { return kind != MemoryKind::kDevice; }

}  // namespace conveyor
