// MemoryStats: process-wide counters per MemoryKind. Tests use them to prove that steady-state
// iterations allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory/memory_kind.h"

namespace conveyor {

struct MemoryStatsSnapshot {
  int64_t current_bytes = 0;         // bytes handed out and not yet returned
  int64_t peak_bytes = 0;            // maximum of current_bytes since start or ResetPeak
  int64_t allocations = 0;           // Allocate calls served (from a pool or upstream)
  int64_t deallocations = 0;         // Deallocate calls
  int64_t upstream_allocations = 0;  // times new memory was taken from the driver/OS
  int64_t upstream_bytes = 0;        // bytes ever taken from the driver/OS
};

class MemoryStats {
 public:
  static MemoryStatsSnapshot Get(MemoryKind kind);
  static void ResetPeak(MemoryKind kind);

  // Called by the memory resources.
  static void OnAllocate(MemoryKind kind, size_t bytes);
  static void OnDeallocate(MemoryKind kind, size_t bytes);
  static void OnUpstream(MemoryKind kind, size_t bytes);
};

}  // namespace conveyor
