#include "core/op/descriptor_arena.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace conveyor {
namespace {
size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

void DescriptorArena::Begin() {
  sealed_ = false;
  entries_used_ = 0;
  pass_start_ = 0;
  retired_.clear();
}

size_t DescriptorArena::Place(size_t bytes) {
  if (sealed_) {
    // A Write during the capture (RunGpu) could move the host buffer the graph's copy node already
    // reads from; its entries would not be in this iteration's upload either.
    throw InvalidArgument(
        "descriptors written after the segment's PrepareGpu passes (in RunGpu, while the segment is "
        "captured): SlotDescriptors::Write belongs in PrepareGpu, Upload in RunGpu");
  }
  const size_t k = entries_used_++;
  const size_t need = RoundUp(std::max<size_t>(bytes, 1), kAlign);
  bool moved = false;
  if (k == reserved_.size()) {
    reserved_.push_back(need);
    offsets_.push_back(k == 0 ? 0 : offsets_[k - 1] + reserved_[k - 1]);
    moved = true;
  } else if (reserved_[k] < need) {
    reserved_[k] = need;
    moved = true;
  }
  if (moved) {
    // Entries after k are placed later in this pass: lay them out again behind k.
    for (size_t i = k + 1; i < reserved_.size(); ++i) offsets_[i] = offsets_[i - 1] + reserved_[i - 1];
    ++generation_;
  }
  const size_t end = offsets_[k] + reserved_[k];
  if (end > host_.size()) {
    // A bigger host buffer (1/4 headroom). Arrays placed before entry k in this pass stay where
    // they are (their pointers may still be written) until Settle() gathers them into this one.
    if (!host_.empty() && offsets_[k] > pass_start_) retired_.push_back(Retired{host_, pass_start_, offsets_[k]});
    host_ = Buffer::Allocate(host_kind_, end + end / 4);
    pass_start_ = offsets_[k];
    ++generation_;
  }
  return offsets_[k];
}

void DescriptorArena::Settle() {
  for (const Retired& r : retired_) {
    std::memcpy(static_cast<char*>(host_.host_ptr()) + r.begin, static_cast<const char*>(r.buffer.host_ptr()) + r.begin,
                r.end - r.begin);
  }
  retired_.clear();
  if (entries_used_ != last_pass_entries_) {
    last_pass_entries_ = entries_used_;
    ++generation_;
  }
  sealed_ = true;  // until the next Begin()
}

void* DescriptorArena::host(size_t offset) const { return static_cast<char*>(host_.host_ptr()) + offset; }

const void* DescriptorArena::device(size_t offset) const {
  if (device_.empty()) throw InvalidArgument("DescriptorArena: device address asked before Finish()");
  return static_cast<const char*>(device_.device_ptr()) + offset;
}

size_t DescriptorArena::used() const { return entries_used_ == 0 ? 0 : offsets_[entries_used_ - 1] + reserved_[entries_used_ - 1]; }

void DescriptorArena::Finish(StreamView stream) {
  Settle();
  if (host_.empty()) return;
  if (device_.empty() || device_.size() < host_.size()) {
    device_ = Buffer::Allocate(MemoryKind::kDevice, host_.size(), stream);
    ++generation_;
  }
}

DescriptorArena*& CurrentDescriptorArena() {
  thread_local DescriptorArena* current = nullptr;
  return current;
}

}  // namespace conveyor
