// Applies core/util/cpu_affinity.h's plan to Conveyor's threads: the TBB pools' workers
// (TbbThreadPool), the executor's thread and the readers' read-ahead threads. Never to the
// application's threads (a caller entering a pool keeps its own affinity).
#pragma once

#include "core/util/cpu_affinity.h"

namespace conveyor {

// The process's plan, made once from CONVEYOR_THREAD_AFFINITY, sched_getaffinity, /proc/interrupts
// and /proc/irq/N/effective_affinity_list for the visible GPUs. Throws InvalidArgument (each call)
// when CONVEYOR_THREAD_AFFINITY is not auto, off or a CPU list this process may use.
const ThreadCpus& ProcessThreadCpus();

// Restricts the calling thread to plan.cpus (nothing when !plan.restrict). False if the OS refused.
bool ApplyThreadCpus(const ThreadCpus& plan);

// This thread's allowed CPUs (sched_getaffinity), sorted.
std::vector<int> ThisThreadCpus();

}  // namespace conveyor
