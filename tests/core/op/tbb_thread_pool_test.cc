// TbbThreadPool asked for more threads than TBB's process-wide limit: it runs at the limit — the
// threads TBB would run anyway — and nothing is printed (TBB warns on stderr when an arena asks
// for more workers than allowed, which landed in the middle of the CLI's output on small machines).
#include "core/op/tbb_thread_pool.h"

#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>
#include <thread>

namespace conveyor {
namespace {

int Limit() {
  return static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

TEST(TbbThreadPool, MoreThreadsThanAllowedRunAtTheLimitWithoutAWarning) {
  const int asked = Limit() * 4 + 3;
  testing::internal::CaptureStderr();
  TbbThreadPool pool(asked);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(2000, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sum += i;
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // room for every worker to join
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(pool.num_threads(), Limit());
  EXPECT_EQ(sum.load(), 2000 * 1999 / 2);
  EXPECT_LE(static_cast<int>(ids.size()), pool.num_threads());
  EXPECT_EQ(err.find("TBB Warning"), std::string::npos) << err;
}

// RunBeside: `a` holds one thread until `b` has started on another (what a GPU decoder's engines'
// call does beside the CUDA backend's images), `b` spreads a ParallelFor over the rest; both done
// when it returns.
TEST(TbbThreadPool, RunBesideRunsBothTasksAtOnce) {
  if (Limit() < 2) GTEST_SKIP() << "TBB allows one thread here";
  TbbThreadPool pool(std::min(4, Limit()));
  std::atomic<bool> b_started{false}, a_saw_b{false};
  std::thread::id a_thread, b_thread;
  std::atomic<int64_t> sum{0};
  pool.RunBeside(
      [&] {
        a_thread = std::this_thread::get_id();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!b_started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        a_saw_b = b_started.load();
      },
      [&] {
        b_thread = std::this_thread::get_id();
        b_started = true;
        pool.ParallelFor(1000, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) sum += i;
        });
      });
  EXPECT_TRUE(a_saw_b.load()) << "b never started while a held its thread";
  EXPECT_NE(a_thread, b_thread);
  EXPECT_EQ(sum.load(), 1000 * 999 / 2);
}

TEST(TbbThreadPool, RunBesideRethrowsAndRunsInOrderOnOneThread) {
  TbbThreadPool pool(2);
  EXPECT_THROW(pool.RunBeside([] {}, [] { throw std::runtime_error("from b"); }), std::runtime_error);
  TbbThreadPool one(1);
  std::vector<int> order;
  one.RunBeside([&] { order.push_back(1); }, [&] { order.push_back(2); });
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(TbbThreadPool, WithinTheLimitTheRequestStands) {
  EXPECT_EQ(TbbThreadPool(1).num_threads(), 1);
  EXPECT_EQ(TbbThreadPool(0).num_threads(), 1);
  EXPECT_EQ(TbbThreadPool(-5).num_threads(), 1);
  EXPECT_EQ(TbbThreadPool(Limit()).num_threads(), Limit());
}

}  // namespace
}  // namespace conveyor
