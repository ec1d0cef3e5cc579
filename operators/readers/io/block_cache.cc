#include "operators/readers/io/block_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace conveyor::ops::http {
namespace {

constexpr int kReadAheadThreads = 2;  // two requests in flight hide one's latency behind the other's
constexpr int64_t kSequentialAfterReads = 3;
constexpr int64_t kFirstWindowBlocks = 2;

}  // namespace

struct BlockCache::Block {
  Block(int64_t index, int64_t offset, int64_t bytes, std::shared_ptr<std::atomic<int64_t>> held)
      : index(index), offset(offset), bytes(bytes), held(std::move(held)) {}
  ~Block() { held->fetch_sub(bytes); }  // reserved by ReserveLocked before the block was made
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  enum class State { kFetching, kReady, kFailed };
  const int64_t index;
  const int64_t offset;
  const int64_t bytes;
  const std::shared_ptr<std::atomic<int64_t>> held;
  std::unique_ptr<uint8_t[]> data;  // allocated by the fetching thread, outside the lock
  State state = State::kFetching;   // guarded by the cache's mutex_
  uint64_t used = 0;                // guarded by mutex_: least recently used is evicted first
};

BlockCache::BlockCache(int64_t size, Plan plan, Fetch fetch)
    : size_(size), plan_(plan), fetch_(std::move(fetch)), held_(std::make_shared<std::atomic<int64_t>>(0)) {}

BlockCache::~BlockCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_queued_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

BlockCache::Stats BlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.held_bytes = held_->load();
  return stats;
}

void BlockCache::Read(int64_t offset, int64_t bytes, uint8_t* dst) {
  if (bytes == 0) return;
  int64_t window = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    window = NoteReadLocked(offset, bytes);
  }
  if (window > 0) return ReadSequential(offset, bytes, dst, window);
  if (!CopyIfCached(offset, bytes, dst)) fetch_(offset, bytes, dst, nullptr);
}

int64_t BlockCache::NoteReadLocked(int64_t offset, int64_t bytes) {
  ++tick_;
  Run* run = nullptr;
  for (Run& candidate : runs_) {
    if (candidate.end >= 0 && offset >= candidate.end - plan_.block_bytes &&
        offset <= candidate.end + plan_.block_bytes) {
      run = &candidate;
      break;
    }
  }
  if (run == nullptr) {  // a new run replaces the least recently used one
    run = &*std::min_element(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.used < b.used; });
    *run = Run{offset + bytes, 1, 0, tick_};
    return 0;
  }
  run->end = std::max(run->end, offset + bytes);
  run->used = tick_;
  if (++run->reads < kSequentialAfterReads) return 0;
  run->window = run->window == 0 ? kFirstWindowBlocks : std::min(run->window * 2, plan_.max_ahead_blocks);
  ++stats_.sequential_reads;
  return std::min(run->window, plan_.max_ahead_blocks);
}

bool BlockCache::CopyIfCached(int64_t offset, int64_t bytes, uint8_t* dst) {
  const int64_t first = offset / plan_.block_bytes;
  const int64_t last = (offset + bytes - 1) / plan_.block_bytes;
  std::vector<std::shared_ptr<Block>> held;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t index = first; index <= last; ++index) {
      const auto found = blocks_.find(index);
      if (found == blocks_.end() || found->second->state != Block::State::kReady) return false;
      held.push_back(found->second);
    }
    for (const auto& block : held) block->used = tick_;
    ++stats_.cached_reads;
  }
  for (const auto& block : held) {  // ready blocks do not change: copy outside the lock
    const int64_t begin = std::max(offset, block->offset);
    const int64_t end = std::min(offset + bytes, block->offset + block->bytes);
    std::memcpy(dst + (begin - offset), block->data.get() + (begin - block->offset), static_cast<size_t>(end - begin));
  }
  return true;
}

void BlockCache::ReadSequential(int64_t offset, int64_t bytes, uint8_t* dst, int64_t window) {
  const int64_t first = offset / plan_.block_bytes;
  const int64_t last = (offset + bytes - 1) / plan_.block_bytes;
  std::vector<Piece> pieces;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t index = first; index <= last; ++index) pieces.push_back(AcquireLocked(index, offset));
    QueueReadAheadLocked(last + 1, window, offset);  // before fetching ours: both run at once
  }
  // Bytes without a usable block are fetched directly, adjacent ones in one request.
  int64_t direct_begin = -1;
  int64_t direct_end = -1;
  const auto flush_direct = [&] {
    if (direct_begin >= 0) fetch_(direct_begin, direct_end - direct_begin, dst + (direct_begin - offset), nullptr);
    direct_begin = -1;
  };
  // Our own blocks first: no reader waits for others while a block only it will fetch is pending.
  for (Piece& piece : pieces) {
    if (piece.fetch_it) FetchBlock(piece.block, nullptr);
  }
  for (int64_t index = first; index <= last; ++index) {
    Piece& piece = pieces[static_cast<size_t>(index - first)];
    const int64_t begin = std::max(offset, index * plan_.block_bytes);
    const int64_t end = std::min(offset + bytes, (index + 1) * plan_.block_bytes);
    if (piece.block != nullptr && WaitReady(piece.block)) {
      flush_direct();
      std::memcpy(dst + (begin - offset), piece.block->data.get() + (begin - piece.block->offset),
                  static_cast<size_t>(end - begin));
      continue;
    }
    if (direct_begin < 0) direct_begin = begin;
    direct_end = end;
  }
  flush_direct();
}

BlockCache::Piece BlockCache::AcquireLocked(int64_t index, int64_t reader_offset) {
  const auto found = blocks_.find(index);
  if (found != blocks_.end() && found->second->state != Block::State::kFailed) {
    found->second->used = tick_;
    return {found->second, false};
  }
  std::shared_ptr<Block> block = MakeBlockLocked(index, reader_offset, /*behind_only=*/false);
  return {block, block != nullptr};
}

std::shared_ptr<BlockCache::Block> BlockCache::MakeBlockLocked(int64_t index, int64_t reader_offset,
                                                               bool behind_only) {
  const int64_t offset = index * plan_.block_bytes;
  const int64_t bytes = std::min(plan_.block_bytes, size_ - offset);
  if (!ReserveLocked(bytes, reader_offset, behind_only)) return nullptr;
  auto block = std::make_shared<Block>(index, offset, bytes, held_);
  block->used = tick_;
  blocks_[index] = block;
  return block;
}

bool BlockCache::ReserveLocked(int64_t bytes, int64_t reader_offset, bool behind_only) {
  while (held_->load() + bytes > plan_.memory_limit_bytes) {
    // Victim: a ready block only the map holds; behind the reader first, then the oldest.
    auto victim = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      const Block& block = *it->second;
      if (block.state != Block::State::kReady || it->second.use_count() != 1) continue;
      const bool behind = block.offset + block.bytes <= reader_offset;
      if (behind_only && !behind) continue;
      if (victim == blocks_.end()) {
        victim = it;
        continue;
      }
      const Block& best = *victim->second;
      const bool best_behind = best.offset + best.bytes <= reader_offset;
      if ((behind && !best_behind) || (behind == best_behind && block.used < best.used)) victim = it;
    }
    if (victim == blocks_.end()) return false;
    blocks_.erase(victim);  // its destructor gives its bytes back
  }
  const int64_t now = held_->fetch_add(bytes) + bytes;  // only here, under mutex_: the bound holds
  stats_.peak_held_bytes = std::max(stats_.peak_held_bytes, now);
  return true;
}

void BlockCache::QueueReadAheadLocked(int64_t first_index, int64_t window, int64_t reader_offset) {
  bool queued = false;
  for (int64_t index = first_index; index < first_index + window && index * plan_.block_bytes < size_; ++index) {
    const auto found = blocks_.find(index);
    if (found != blocks_.end() && found->second->state != Block::State::kFailed) continue;
    std::shared_ptr<Block> block = MakeBlockLocked(index, reader_offset, /*behind_only=*/true);
    if (block == nullptr) break;  // no room: the reader catches up first
    queue_.push_back(std::move(block));
    ++stats_.read_ahead_blocks;
    queued = true;
  }
  if (!queued) return;
  if (workers_.empty()) {
    for (int i = 0; i < kReadAheadThreads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
  work_queued_.notify_all();
}

void BlockCache::FetchBlock(const std::shared_ptr<Block>& block, const std::atomic<bool>* cancel) {
  bool ok = true;
  try {
    block->data = std::make_unique_for_overwrite<uint8_t[]>(static_cast<size_t>(block->bytes));
    fetch_(block->offset, block->bytes, block->data.get(), cancel);
  } catch (const std::exception&) {
    ok = false;  // readers of this block ask for their own bytes: their errors name what they asked
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.blocks_fetched;
    block->state = ok ? Block::State::kReady : Block::State::kFailed;
    const auto found = blocks_.find(block->index);
    if (!ok && found != blocks_.end() && found->second == block) blocks_.erase(found);
  }
  block_done_.notify_all();
}

bool BlockCache::WaitReady(const std::shared_ptr<Block>& block) {
  std::unique_lock<std::mutex> lock(mutex_);
  block_done_.wait(lock, [&] { return block->state != Block::State::kFetching; });
  return block->state == Block::State::kReady;
}

void BlockCache::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Block> block;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      block = std::move(queue_.front());
      queue_.pop_front();
    }
    FetchBlock(block, &stop_);
  }
}

}  // namespace conveyor::ops::http
