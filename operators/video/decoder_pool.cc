#include "operators/video/decoder_pool.h"

#include <vector>

namespace conveyor::ops::video {

DecoderPool::Lease DecoderPool::Acquire(int64_t file) {
  std::vector<std::unique_ptr<ClipDecoder>> closing;  // closed outside the lock, before the new file opens
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->first != file) continue;
      std::unique_ptr<ClipDecoder> decoder = std::move(it->second);
      idle_.erase(it);
      ++busy_;
      return Lease(this, file, std::move(decoder));
    }
    ++busy_;  // counted while it opens, so concurrent releases keep the bound
    ++opens_;
    TrimIdle(&closing);
  }
  closing.clear();  // their NVDEC sessions go back to the cache for the file about to open
  try {
    return Lease(this, file, factory_(file));
  } catch (...) {
    Forget();
    throw;
  }
}

void DecoderPool::Release(int64_t file, std::unique_ptr<ClipDecoder> decoder) {
  std::vector<std::unique_ptr<ClipDecoder>> closing;  // closed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --busy_;
    idle_.emplace_front(file, std::move(decoder));
    TrimIdle(&closing);
  }
}

void DecoderPool::TrimIdle(std::vector<std::unique_ptr<ClipDecoder>>* closing) {
  while (!idle_.empty() && busy_ + static_cast<int64_t>(idle_.size()) > max_open_) {
    closing->push_back(std::move(idle_.back().second));
    idle_.pop_back();
  }
}

void DecoderPool::Forget() {
  std::lock_guard<std::mutex> lock(mutex_);
  --busy_;
}

int64_t DecoderPool::open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_ + static_cast<int64_t>(idle_.size());
}

int64_t DecoderPool::opens() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return opens_;
}

}  // namespace conveyor::ops::video
