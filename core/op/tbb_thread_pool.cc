#include "core/op/tbb_thread_pool.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/op/thread_affinity.h"

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

// Puts TBB's workers on the plan's CPUs while they are in the arena; each gets its previous
// affinity back on leaving (TBB's workers serve every arena of the process), or, for a worker
// still attached when the pool goes (TBB does not call on_scheduler_exit then), from the destructor
// by its thread id.
class TbbThreadPool::CpuObserver final : public tbb::task_scheduler_observer {
 public:
  CpuObserver(tbb::task_arena& arena, const ThreadCpus& cpus) : tbb::task_scheduler_observer(arena), cpus_(cpus) {
    observe(true);
  }
  ~CpuObserver() override {
    observe(false);
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [tid, set] : saved_) sched_setaffinity(tid, sizeof(set), &set);
  }
  void on_scheduler_entry(bool is_worker) override {
    if (!is_worker) return;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      saved_.emplace(static_cast<pid_t>(syscall(SYS_gettid)), set);  // keeps the first if nested
    }
    ApplyThreadCpus(cpus_);
  }
  void on_scheduler_exit(bool is_worker) override {
    if (!is_worker) return;
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = saved_.find(static_cast<pid_t>(syscall(SYS_gettid)));
    if (it == saved_.end()) return;
    sched_setaffinity(0, sizeof(it->second), &it->second);
    saved_.erase(it);
  }

 private:
  ThreadCpus cpus_;
  std::mutex mu_;
  std::map<pid_t, cpu_set_t> saved_;  // workers in the arena: the affinity they came with
};

TbbThreadPool::TbbThreadPool(int num_threads) : TbbThreadPool(num_threads, ProcessThreadCpus()) {}

TbbThreadPool::TbbThreadPool(int num_threads, const ThreadCpus& cpus)
    : num_threads_(AllowedThreads(num_threads)), arena_(num_threads_) {
  if (cpus.restrict) {
    arena_.initialize();
    observer_ = std::make_unique<CpuObserver>(arena_, cpus);
  }
}

TbbThreadPool::~TbbThreadPool() = default;

void TbbThreadPool::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // TBB propagates the first exception out of parallel_for and cancels the remaining chunks.
  // Isolated: while the caller waits for its chunks it runs only those, not another thread's tasks
  // in the same arena (the executor's CPU thread and a decoder's host work on the issue thread,
  // docs/executor.md) — stealing one would make this call wait behind unrelated work.
  arena_.execute([&] {
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, std::max<int64_t>(1, grain)),
                        [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); });
    });
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
