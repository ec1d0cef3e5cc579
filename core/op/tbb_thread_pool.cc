#include "core/op/tbb_thread_pool.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>

namespace conveyor {

namespace {
// TBB never runs more threads than its process-wide limit (the machine's cores unless a
// tbb::global_control lowers or raises it); an arena that asks for more gets the limit and TBB
// prints a warning on stderr, in the middle of a user's output. Asking for the limit instead runs
// exactly the same threads, silently.
int AllowedThreads(int requested) {
  const int limit = static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  return std::clamp(requested, 1, std::max(1, limit));
}
}  // namespace

TbbThreadPool::TbbThreadPool(int num_threads) : num_threads_(AllowedThreads(num_threads)), arena_(num_threads_) {}

void TbbThreadPool::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // TBB propagates the first exception out of parallel_for and cancels the remaining chunks.
  arena_.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, std::max<int64_t>(1, grain)),
                      [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); });
  });
}

void TbbThreadPool::RunBeside(const std::function<void()>& a, const std::function<void()>& b) {
  if (num_threads_ <= 1) {
    a();
    b();
    return;
  }
  // `b` goes to the arena as a task for an idle worker to take; the caller runs `a` meanwhile and
  // then waits for `b` (running it itself if no worker took it). Not parallel_invoke: that may run
  // `b` on the caller first and leave `a` queued behind it.
  tbb::task_group group;
  arena_.execute([&] { group.run(b); });
  try {
    a();
  } catch (...) {
    try {
      arena_.execute([&] { group.wait(); });  // b reads the caller's frame: let it finish first
    } catch (...) {
    }
    throw;
  }
  arena_.execute([&] { group.wait(); });
}

}  // namespace conveyor
