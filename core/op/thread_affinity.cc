#include "core/op/thread_affinity.h"

#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "core/cuda/device.h"
#include "core/error.h"

namespace conveyor {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Plan {
  ThreadCpus cpus;
  std::string error;  // a bad CONVEYOR_THREAD_AFFINITY: thrown at every use
};

const Plan& GetPlan() {
  static const Plan plan = [] {
    Plan p;
    const char* env = std::getenv("CONVEYOR_THREAD_AFFINITY");
    const std::string setting = env != nullptr ? env : "";
    try {
      std::vector<int> interrupts;
      if (setting != "off") {
        interrupts = GpuInterruptCpus(ReadText("/proc/interrupts"), cuda::PciBusIds(), [](int irq) {
          const std::string base = "/proc/irq/" + std::to_string(irq) + "/";
          std::string cpus = ReadText(base + "effective_affinity_list");
          return cpus.empty() ? ReadText(base + "smp_affinity_list") : cpus;
        });
      }
      p.cpus = PlanThreadCpus(setting, ThisThreadCpus(), interrupts);
    } catch (const InvalidArgument& e) {
      p.error = e.what();
    }
    return p;
  }();
  return plan;
}

}  // namespace

std::vector<int> ThisThreadCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

const ThreadCpus& ProcessThreadCpus() {
  const Plan& p = GetPlan();
  if (!p.error.empty()) throw InvalidArgument(p.error);
  return p.cpus;
}

bool ApplyThreadCpus(const ThreadCpus& plan) {
  if (!plan.restrict || plan.cpus.empty()) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : plan.cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  }
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace conveyor
