// On a GPU machine: the process's plan (CONVEYOR_THREAD_AFFINITY unset = auto) leaves out the CPUs
// the GPU's interrupts go to, and a pool's workers never run there. Skips where the GPU's interrupt
// routing cannot be read or where leaving those CPUs out is not worth it (small machines).
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/cuda/device.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/thread_affinity.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ThreadAffinityGpu, AutoKeepsThePoolOffTheGpuInterruptCpus) {
  CONVEYOR_REQUIRE_GPU();
  unsetenv("CONVEYOR_THREAD_AFFINITY");
  const std::vector<int> irq = GpuInterruptCpus(ReadText("/proc/interrupts"), cuda::PciBusIds(), [](int n) {
    return ReadText("/proc/irq/" + std::to_string(n) + "/effective_affinity_list");
  });
  if (irq.empty()) GTEST_SKIP() << "no interrupt line of this GPU readable in /proc/interrupts";
  const ThreadCpus& plan = ProcessThreadCpus();
  std::cout << "GPU interrupts on CPUs " << FormatCpuList(irq) << "; plan: " << plan.summary << "\n";
  if (!plan.restrict) GTEST_SKIP() << plan.summary;
  for (int c : irq) EXPECT_FALSE(std::binary_search(plan.cpus.begin(), plan.cpus.end(), c)) << "CPU " << c;
  TbbThreadPool pool(static_cast<int>(plan.cpus.size()));
  std::mutex mu;
  std::set<int> cpus;
  const auto caller = std::this_thread::get_id();
  for (int round = 0; round < 5; ++round) {
    pool.ParallelFor(2000, 1, [&](int64_t, int64_t) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
      while (std::chrono::steady_clock::now() < until) {
      }
      const int c = sched_getcpu();
      std::lock_guard<std::mutex> lock(mu);
      if (std::this_thread::get_id() != caller) cpus.insert(c);
    });
  }
  ASSERT_GE(cpus.size(), 2u) << "the workers used fewer than two CPUs";
  for (int c : irq) EXPECT_EQ(cpus.count(c), 0u) << "a worker ran on CPU " << c << ", where the GPU's interrupts go";
}

}  // namespace
}  // namespace conveyor
