// Which CPUs Conveyor's own threads run on: by default all the process may use except those that
// take its GPUs' interrupts (CONVEYOR_THREAD_AFFINITY=auto), or all of them (off), or a list.
//
// Why: nvJPEG's hardware engines raise an interrupt per image or so (about 50,000 per second on
// the H100 at 25k images/s, 2026-11-26), all on the one CPU the GPU's interrupt line is routed to.
// On a virtual machine each interrupt also stops that CPU for the hypervisor: a thread of ours that
// lands there runs about ten times slower while the engines work — one CUDA-backend image per batch
// took 6-8 ms instead of 0.7, and when the engines' own calling thread landed there, the engines
// slowed with it. DALI likewise pins its threads (to the GPU's NUMA node, DALI_AFFINITY_MASK).
//
// The parsing and the decision are pure functions (tested on the CPU with real /proc text);
// thread_affinity.h reads the machine and applies the result.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace conveyor {

// "0-3,14" -> {0, 1, 2, 3, 14} (sorted, unique). Throws InvalidArgument naming `what` and the text
// on anything else (empty, "3-1", "a", negative numbers).
std::vector<int> ParseCpuList(const std::string& text, const std::string& what);
// {0, 1, 2, 3, 14} -> "0-3,14".
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs the interrupts of the GPUs at `pci_bus_ids` ("0000:00:06.0", any case) go to, from the
// text of /proc/interrupts. Lines of the nvidia driver that name one of the bus ids are the GPUs'
// (where no nvidia line names any PCI address, older kernels' format, every nvidia line is); of
// those, the ones that carried at least 5% of their interrupts so far (the driver has several
// vectors, one usually takes them all), or the first when none has any yet. Each such line's CPUs
// come from `irq_cpus(irq)` (the text of /proc/irq/N/effective_affinity_list); where that is
// unreadable or malformed, the CPUs that took at least 10% of the line's interrupts.
std::vector<int> GpuInterruptCpus(const std::string& proc_interrupts, const std::vector<std::string>& pci_bus_ids,
                                  const std::function<std::string(int irq)>& irq_cpus);

// The decision: `setting` is CONVEYOR_THREAD_AFFINITY's value ("" or "auto", "off", or a CPU
// list), `allowed` the process's CPUs (sched_getaffinity), `interrupt_cpus` GpuInterruptCpus.
struct ThreadCpus {
  bool restrict = false;   // false: leave threads where the OS puts them
  std::vector<int> cpus;   // when restrict: the CPUs our threads may run on
  std::string summary;     // one line for logs and `conveyor bench`, e.g. "auto: CPUs 0-13,15 (off 14: GPU interrupts)"
};
// auto restricts only where the interrupt CPUs are a quarter or less of `allowed` and at least two
// CPUs remain (never takes away most of a small machine). Throws InvalidArgument for a setting that
// is not auto, off or a CPU list, or a list with CPUs outside `allowed`.
ThreadCpus PlanThreadCpus(const std::string& setting, std::vector<int> allowed, std::vector<int> interrupt_cpus);

}  // namespace conveyor
