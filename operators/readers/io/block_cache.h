// BlockCache: read-ahead for sequential readers of one remote source, under a hard memory bound.
// It knows nothing of HTTP: it calls a fetch function for byte ranges.
//
// Access is judged per read. Up to 8 recent runs are tracked; a read continues a run when it
// starts within one block of the run's end (either side: threads reading consecutive samples
// arrive a little out of order). The third read of a run is sequential, and so is every read
// after it:
//
//   random read ──────────────────────────────> fetch exactly [offset, offset + bytes) into dst
//                                               (or copy it from cached blocks if all are there)
//   sequential read ─> blocks covering it ─────> cached: copy; being fetched: wait; missing: fetch
//                    └> next `window` blocks ──> queued for the read-ahead threads (2 per source)
//
// Blocks are block_bytes long and aligned to block_bytes (the last one shorter). A run's window
// starts at 2 blocks and doubles with each sequential read up to max_ahead_blocks.
//
// Memory bound: a block's bytes are reserved before its buffer exists and released when it is
// freed, so the bytes held never exceed memory_limit_bytes (peak_held_bytes proves it). Making
// room evicts ready blocks nobody is copying from: for read-ahead only blocks wholly behind the
// reader, for a reader's own block those first, then least recently used. Without room a reader
// fetches its bytes directly and no read-ahead is queued. A block whose fetch failed is dropped
// and each reader asks for its own bytes directly, so its error names exactly what it asked.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace conveyor::ops::http {

class BlockCache {
 public:
  // Reads [offset, offset + bytes) into dst or throws; `cancel` (may be null) aborts it early.
  using Fetch = std::function<void(int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel)>;

  struct Plan {
    int64_t block_bytes = 1 << 20;
    int64_t max_ahead_blocks = 8;
    int64_t memory_limit_bytes = 256 << 20;
  };

  struct Stats {
    int64_t held_bytes = 0;         // bytes of blocks alive now
    int64_t peak_held_bytes = 0;    // the most ever held at once
    int64_t blocks_fetched = 0;     // by readers and read-ahead threads
    int64_t read_ahead_blocks = 0;  // queued for the read-ahead threads
    int64_t sequential_reads = 0;
    int64_t cached_reads = 0;       // random reads served wholly from cached blocks
  };

  BlockCache(int64_t size, Plan plan, Fetch fetch);
  // Stops the read-ahead threads, aborting their requests. No Read may be running.
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;  // owns threads that point at it
  BlockCache& operator=(const BlockCache&) = delete;

  // Thread-safe. 0 <= offset, offset + bytes <= size (the caller checks).
  void Read(int64_t offset, int64_t bytes, uint8_t* dst);

  Stats stats() const;

 private:
  struct Block;
  struct Run {
    int64_t end = -1;  // -1: unused
    int64_t reads = 0;
    int64_t window = 0;  // blocks to keep fetched ahead
    uint64_t used = 0;
  };
  struct Piece {  // one block's share of a read
    std::shared_ptr<Block> block;  // null: no room, read directly
    bool fetch_it = false;         // this reader made the block and fetches it
  };

  // Updates the runs; returns the read's read-ahead window in blocks, 0 for a random read.
  int64_t NoteReadLocked(int64_t offset, int64_t bytes);
  bool CopyIfCached(int64_t offset, int64_t bytes, uint8_t* dst);
  void ReadSequential(int64_t offset, int64_t bytes, uint8_t* dst, int64_t window);
  Piece AcquireLocked(int64_t index, int64_t reader_offset);
  std::shared_ptr<Block> MakeBlockLocked(int64_t index, int64_t reader_offset, bool behind_only);
  bool ReserveLocked(int64_t bytes, int64_t reader_offset, bool behind_only);
  void QueueReadAheadLocked(int64_t first_index, int64_t window, int64_t reader_offset);
  void FetchBlock(const std::shared_ptr<Block>& block, const std::atomic<bool>* cancel);
  bool WaitReady(const std::shared_ptr<Block>& block);
  void WorkerLoop();

  const int64_t size_;
  const Plan plan_;
  const Fetch fetch_;
  // Held bytes live apart from the cache: a reader may free the last reference to a block.
  std::shared_ptr<std::atomic<int64_t>> held_;

  mutable std::mutex mutex_;
  std::condition_variable block_done_;   // a block turned ready or failed
  std::condition_variable work_queued_;  // read-ahead queued, or stopping
  std::map<int64_t, std::shared_ptr<Block>> blocks_;  // by index
  std::deque<std::shared_ptr<Block>> queue_;
  std::vector<std::thread> workers_;
  std::array<Run, 8> runs_;
  uint64_t tick_ = 0;
  Stats stats_;
  std::atomic<bool> stop_{false};
};

}  // namespace conveyor::ops::http
