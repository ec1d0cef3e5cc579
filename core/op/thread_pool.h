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
};

}  // namespace conveyor
