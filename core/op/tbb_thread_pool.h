// TbbThreadPool: CpuThreadPool on a tbb::task_arena — for the executor, the test harness and CPU
// kernels that want TBB directly (arena()). num_threads is capped at TBB's process-wide limit (the
// machine's cores by default), which TBB would impose anyway; num_threads() is what runs.
// TBB's worker threads run on the CPUs of a ThreadCpus plan while they work in this arena (the
// process's, thread_affinity.h, unless one is given), and get their own affinity back when they
// leave it; a caller entering the arena keeps its own.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>

#include "core/op/thread_pool.h"
#include "core/util/cpu_affinity.h"

namespace conveyor {

class TbbThreadPool final : public CpuThreadPool {
 public:
  explicit TbbThreadPool(int num_threads);
  TbbThreadPool(int num_threads, const ThreadCpus& cpus);
  ~TbbThreadPool() override;
  int num_threads() const override { return num_threads_; }
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) override;
  // `b` as a task of the arena (a tbb::task_group) for an idle worker, `a` on the calling thread.
  void RunBeside(const std::function<void()>& a, const std::function<void()>& b) override;
  tbb::task_arena& arena() { return arena_; }

 private:
  class CpuObserver;
  int num_threads_;
  tbb::task_arena arena_;
  std::unique_ptr<CpuObserver> observer_;  // after arena_: stops observing before the arena goes
};

}  // namespace conveyor
