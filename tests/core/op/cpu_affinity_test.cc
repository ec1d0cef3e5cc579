// The thread-affinity plan's pure parts: CPU lists, /proc/interrupts as the H100 machine showed it
// (2026-11-26, after nvJPEG's engines decoded for 3 s: 183,055 interrupts on one vector, all on
// CPU 14), and the decision with its refusals.
#include "core/util/cpu_affinity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.h"

namespace conveyor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

// The header, a non-GPU line, four of the GPU's vectors and a per-CPU line, as the machine wrote them.
const char* kH100Interrupts =
    "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7       CPU8       "
    "CPU9       CPU10      CPU11      CPU12      CPU13      CPU14      CPU15      \n"
    " 24:          0          0          0          0          0          0          0          0          0          "
    "0          0          0          0          0          0          0  IO-APIC   5-edge      ACPI:Ged\n"
    " 42:          0          0          0          0          0          0          0          0          0          "
    "0          0          0          0          0     183055          0 PCI-MSIX-0000:00:06.0   0-edge      nvidia\n"
    " 43:          0          0          0          0          0          0          0          0          0          "
    "0          0          0          0          0          0          0 PCI-MSIX-0000:00:06.0   1-edge      nvidia\n"
    " 44:         39          0          0          0          0          0          0          0          0          "
    "0          0          0          0          0          0          0 PCI-MSIX-0000:00:06.0   2-edge      nvidia\n"
    " 45:          0          0          0          0          0          0          0          0          0          "
    "0          0          0          0          0          0          0 PCI-MSIX-0000:00:06.0   3-edge      nvidia\n"
    "LOC:       2537       3235       2755       2071       4766       2825       3158       2952       3059       "
    "3592       3407       3335       3456       3075       3097       2073   Local timer interrupts\n";

TEST(CpuList, ParsesRangesAndSingles) {
  EXPECT_THAT(ParseCpuList("0-3,14", "x"), ElementsAre(0, 1, 2, 3, 14));
  EXPECT_THAT(ParseCpuList(" 14\n", "x"), ElementsAre(14));
  EXPECT_THAT(ParseCpuList("5,1-2,2", "x"), ElementsAre(1, 2, 5));
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 14}), "0-3,14");
  EXPECT_EQ(FormatCpuList({0, 2, 4, 5}), "0,2,4-5");
  EXPECT_EQ(FormatCpuList(ParseCpuList("0-13,15", "x")), "0-13,15");
}

TEST(CpuList, RefusesWhatIsNotAList) {
  EXPECT_THAT(ErrorOf([] { ParseCpuList("", "THE_VAR"); }),
              HasSubstr("THE_VAR: expected a CPU list such as 0-13,15; got \"\" (empty)"));
  EXPECT_THAT(ErrorOf([] { ParseCpuList("3-1", "THE_VAR"); }), HasSubstr("range \"3-1\" ends before it starts"));
  EXPECT_THAT(ErrorOf([] { ParseCpuList("a", "THE_VAR"); }), HasSubstr("\"a\" is not a CPU number or a range a-b"));
  EXPECT_THAT(ErrorOf([] { ParseCpuList("1,,2", "THE_VAR"); }), HasSubstr("\"\" is not a CPU number"));
}

TEST(GpuInterruptCpus, TheBusyVectorOfOurGpuOnly) {
  std::vector<int> asked;
  const auto cpus = GpuInterruptCpus(kH100Interrupts, {"0000:00:06.0"}, [&](int irq) {
    asked.push_back(irq);
    return std::string(irq == 42 ? "14\n" : "3\n");
  });
  EXPECT_THAT(cpus, ElementsAre(14));
  EXPECT_THAT(asked, ElementsAre(42));  // 44's 39 interrupts are under 5% of the GPU's
  // Another GPU's address (or none of ours): nothing to avoid.
  EXPECT_TRUE(GpuInterruptCpus(kH100Interrupts, {"0000:00:07.0"}, [](int) { return std::string("14"); }).empty());
  EXPECT_TRUE(GpuInterruptCpus(kH100Interrupts, {}, [](int) { return std::string("14"); }).empty());
  // cudaDeviceGetPCIBusId's case may differ from the kernel's.
  EXPECT_THAT(GpuInterruptCpus(kH100Interrupts, {"0000:00:06.0"}, [](int) { return std::string("2-3"); }),
              ElementsAre(2, 3));
}

TEST(GpuInterruptCpus, CountsWhereTheRoutingIsUnreadable) {
  EXPECT_THAT(GpuInterruptCpus(kH100Interrupts, {"0000:00:06.0"}, [](int) { return std::string(); }), ElementsAre(14));
  EXPECT_THAT(GpuInterruptCpus(kH100Interrupts, {"0000:00:06.0"}, [](int) { return std::string("garbage"); }),
              ElementsAre(14));
}

TEST(GpuInterruptCpus, OlderFormatWithoutAddressesAndNoHistory) {
  const std::string old_format =
      "           CPU0       CPU1       CPU2       CPU3\n"
      " 40:          0          0          0          0  IR-PCI-MSI 524288-edge      nvidia\n"
      " 41:          0          0          0          0  IR-PCI-MSI 524289-edge      nvidia\n"
      " 50:        100          0          0          0  IR-PCI-MSI 1048576-edge      nvme0q0\n";
  std::map<int, std::string> routing{{40, "2"}, {41, "3"}, {50, "0"}};
  // No nvidia line names an address: they are all the GPU's; none has interrupts yet: the first.
  EXPECT_THAT(GpuInterruptCpus(old_format, {"0000:3b:00.0"}, [&](int irq) { return routing[irq]; }), ElementsAre(2));
}

TEST(PlanThreadCpus, AutoLeavesOutTheInterruptCpus) {
  const std::vector<int> all = ParseCpuList("0-15", "x");
  const ThreadCpus plan = PlanThreadCpus("", all, {14});
  EXPECT_TRUE(plan.restrict);
  EXPECT_EQ(FormatCpuList(plan.cpus), "0-13,15");
  EXPECT_EQ(plan.summary, "auto: CPUs 0-13,15 (off 14: GPU interrupts)");
  EXPECT_EQ(PlanThreadCpus("auto", all, {14}).cpus, plan.cpus);
  // Interrupts on a CPU this process may not use anyway (taskset): nothing to do.
  EXPECT_FALSE(PlanThreadCpus("auto", ParseCpuList("0-7", "x"), {14}).restrict);
  EXPECT_FALSE(PlanThreadCpus("auto", all, {}).restrict);
}

TEST(PlanThreadCpus, AutoNeverTakesAwayMuchOfASmallMachine) {
  const ThreadCpus two = PlanThreadCpus("auto", {0, 1}, {1});
  EXPECT_FALSE(two.restrict);
  EXPECT_THAT(two.summary, HasSubstr("too many of 0-1 to leave out"));
  EXPECT_FALSE(PlanThreadCpus("auto", ParseCpuList("0-7", "x"), {0, 1, 2}).restrict);
  EXPECT_TRUE(PlanThreadCpus("auto", ParseCpuList("0-7", "x"), {0, 1}).restrict);
}

TEST(PlanThreadCpus, OffAndExplicitLists) {
  const std::vector<int> all = ParseCpuList("0-15", "x");
  const ThreadCpus off = PlanThreadCpus("off", all, {14});
  EXPECT_FALSE(off.restrict);
  const ThreadCpus list = PlanThreadCpus("2-5", all, {14});
  EXPECT_TRUE(list.restrict);
  EXPECT_THAT(list.cpus, ElementsAre(2, 3, 4, 5));
  EXPECT_EQ(list.summary, "CPUs 2-5 (CONVEYOR_THREAD_AFFINITY)");
}

TEST(PlanThreadCpus, RefusesBadSettingsSayingWhatArrived) {
  const std::vector<int> all = ParseCpuList("0-15", "x");
  EXPECT_EQ(ErrorOf([&] { PlanThreadCpus("banana", all, {}); }),
            "CONVEYOR_THREAD_AFFINITY: expected auto, off or a CPU list such as 0-13,15; got \"banana\"");
  EXPECT_EQ(ErrorOf([&] { PlanThreadCpus("12-20", all, {}); }),
            "CONVEYOR_THREAD_AFFINITY=\"12-20\": CPUs 16-20 are not among the CPUs this process may use (0-15)");
  EXPECT_THAT(ErrorOf([&] { PlanThreadCpus("5-2", all, {}); }),
              HasSubstr("CONVEYOR_THREAD_AFFINITY: expected a CPU list such as 0-13,15; got \"5-2\""));
}

}  // namespace
}  // namespace conveyor
