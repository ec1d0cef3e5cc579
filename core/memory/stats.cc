#include "core/memory/stats.h"

#include <atomic>

namespace conveyor {
namespace {

struct Counters {
  std::atomic<int64_t> current{0}, peak{0}, allocations{0}, deallocations{0}, upstream{0},
      upstream_bytes{0};
};

Counters& For(MemoryKind kind) {
  static Counters counters[4];
  return counters[static_cast<int>(kind)];
}

}  // namespace

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
  }
  return "unknown";
}

MemoryStatsSnapshot MemoryStats::Get(MemoryKind kind) {
  const Counters& c = For(kind);
  return {c.current.load(), c.peak.load(), c.allocations.load(), c.deallocations.load(),
          c.upstream.load(), c.upstream_bytes.load()};
}

void MemoryStats::ResetPeak(MemoryKind kind) { For(kind).peak.store(For(kind).current.load()); }

void MemoryStats::OnAllocate(MemoryKind kind, size_t bytes) {
  Counters& c = For(kind);
  c.allocations.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = c.current.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}

void MemoryStats::OnDeallocate(MemoryKind kind, size_t bytes) {
  Counters& c = For(kind);
  c.deallocations.fetch_add(1, std::memory_order_relaxed);
  c.current.fetch_sub(static_cast<int64_t>(bytes));
}

void MemoryStats::OnUpstream(MemoryKind kind, size_t bytes) {
  For(kind).upstream.fetch_add(1, std::memory_order_relaxed);
  For(kind).upstream_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace conveyor
