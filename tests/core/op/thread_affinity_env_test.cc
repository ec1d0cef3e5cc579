// CONVEYOR_THREAD_AFFINITY as a CPU list (set before the process's plan is first made): the
// default TbbThreadPool's workers run there, and the plan says so.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "core/op/tbb_thread_pool.h"
#include "core/op/thread_affinity.h"

namespace conveyor {
namespace {

TEST(ThreadAffinityEnv, AListPutsThePoolsWorkersThere) {
  const std::vector<int> all = ThisThreadCpus();
  ASSERT_FALSE(all.empty());
  const std::string cpu = std::to_string(all.back());
  ASSERT_EQ(setenv("CONVEYOR_THREAD_AFFINITY", cpu.c_str(), 1), 0);
  const ThreadCpus& plan = ProcessThreadCpus();
  EXPECT_TRUE(plan.restrict);
  EXPECT_EQ(plan.cpus, std::vector<int>({all.back()}));
  EXPECT_EQ(plan.summary, "CPUs " + cpu + " (CONVEYOR_THREAD_AFFINITY)");
  TbbThreadPool pool(4);
  if (pool.num_threads() < 2) GTEST_SKIP() << "TBB allows one thread here: no workers to place";
  std::mutex mu;
  std::set<int> cpus;
  const auto caller = std::this_thread::get_id();
  pool.ParallelFor(400, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    const int c = sched_getcpu();
    std::lock_guard<std::mutex> lock(mu);
    if (std::this_thread::get_id() != caller) cpus.insert(c);
  });
  ASSERT_FALSE(cpus.empty());
  EXPECT_EQ(cpus, std::set<int>({all.back()}));
  EXPECT_EQ(ThisThreadCpus(), all);
}

}  // namespace
}  // namespace conveyor
