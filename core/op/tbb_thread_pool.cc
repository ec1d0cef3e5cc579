#include "core/op/tbb_thread_pool.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>

namespace conveyor {

TbbThreadPool::TbbThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)), arena_(num_threads_) {}

void TbbThreadPool::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // TBB propagates the first exception out of parallel_for and cancels the remaining chunks.
  arena_.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, std::max<int64_t>(1, grain)),
                      [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); });
  });
}

}  // namespace conveyor
