// TbbThreadPool with a ThreadCpus plan: its TBB workers run only on the plan's CPUs while in its
// arena and get their own affinity back when they leave; the calling thread keeps its own.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/op/tbb_thread_pool.h"
#include "core/op/thread_affinity.h"

namespace conveyor {
namespace {

// Each task's CPU and, per thread, the CPUs it was allowed.
struct Seen {
  std::mutex mu;
  std::set<int> cpus;
  std::set<std::vector<int>> masks;
  std::set<std::thread::id> threads;
};

void Observe(TbbThreadPool& pool, Seen& seen, std::thread::id caller) {
  pool.ParallelFor(400, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // room for every worker to join
    const int cpu = sched_getcpu();
    std::vector<int> mask = ThisThreadCpus();
    std::lock_guard<std::mutex> lock(seen.mu);
    if (std::this_thread::get_id() == caller) return;  // the caller may help; it keeps its affinity
    seen.cpus.insert(cpu);
    seen.masks.insert(std::move(mask));
    seen.threads.insert(std::this_thread::get_id());
  });
}

TEST(ThreadAffinity, WorkersRunOnThePlansCpusAndGetTheirOwnBack) {
  const std::vector<int> all = ThisThreadCpus();
  ASSERT_FALSE(all.empty());
  ThreadCpus plan;
  plan.restrict = true;
  plan.cpus = {all.back()};
  {
    TbbThreadPool pool(4, plan);
    if (pool.num_threads() < 2) GTEST_SKIP() << "TBB allows one thread here: no workers to place";
    Seen seen;
    Observe(pool, seen, std::this_thread::get_id());
    ASSERT_FALSE(seen.threads.empty()) << "no worker took a task";
    EXPECT_EQ(seen.cpus, std::set<int>({all.back()}));
    EXPECT_EQ(seen.masks, std::set<std::vector<int>>({{all.back()}}));
  }
  EXPECT_EQ(ThisThreadCpus(), all) << "the caller's affinity changed";
  // The same TBB workers in an arena without a plan: their own (the process's) CPUs again.
  TbbThreadPool free_pool(4, ThreadCpus{});
  Seen seen;
  Observe(free_pool, seen, std::this_thread::get_id());
  ASSERT_FALSE(seen.threads.empty());
  EXPECT_EQ(seen.masks, std::set<std::vector<int>>({all}));
}

TEST(ThreadAffinity, ApplyRestrictsOnlyTheCallingThread) {
  const std::vector<int> all = ThisThreadCpus();
  std::vector<int> inside, outside_after;
  std::thread t([&] {
    ThreadCpus plan;
    plan.restrict = true;
    plan.cpus = {all.front()};
    EXPECT_TRUE(ApplyThreadCpus(plan));
    inside = ThisThreadCpus();
  });
  t.join();
  EXPECT_EQ(inside, std::vector<int>({all.front()}));
  EXPECT_EQ(ThisThreadCpus(), all);
  EXPECT_TRUE(ApplyThreadCpus(ThreadCpus{}));  // no plan: nothing changes
  EXPECT_EQ(ThisThreadCpus(), all);
}

}  // namespace
}  // namespace conveyor
