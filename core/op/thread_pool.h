// CpuThreadPool: the CPU worker threads an operator may use, behind an interface so that TBB stays
// out of headers (only the executor and CPU kernels see it). The executor's implementation runs
// work in its tbb::task_arena of `num_threads` (core/op/tbb_thread_pool.h).
#pragma once

#include <cstdint>
#include <functional>

namespace conveyor {

class CpuThreadPool {
 public:
  virtual ~CpuThreadPool() = default;
  virtual int num_threads() const = 0;
  // Calls fn(begin, end) over chunks of [0, n) of at least `grain` items, possibly concurrently,
  // and returns when all are done. The first exception a chunk throws is rethrown here.
  virtual void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) = 0;
  // Runs `a` on the calling thread and `b` on the pool's, at once, and returns when both are done;
  // `b` may itself ParallelFor over the pool while `a` holds the caller (a GPU decoder's engines'
  // call beside the CUDA backend's images). An exception of `a` is rethrown after `b` finished,
  // else one of `b`. This default hands both to ParallelFor, which may run them one after the
  // other on one thread.
  virtual void RunBeside(const std::function<void()>& a, const std::function<void()>& b) {
    ParallelFor(2, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) (i == 0 ? a : b)();
    });
  }
};

}  // namespace conveyor
