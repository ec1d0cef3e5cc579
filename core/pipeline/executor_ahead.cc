// cpu_stage_thread: two stage threads instead of one (executor.h). The CPU thread takes iteration
// after iteration as slots free up and runs its CPU stage; the issue thread takes the iterations
// in order once their CPU stage is done, issues the GPU stage and completes them. So the CPU stage
// of k+1 runs while the issue thread is still in k's GPU stage — also while a mixed operator's
// RunGpu holds that thread on host work (the JPEG decoder: ~21 ms a batch of 256 photos).
//
// A re-filled iteration (docs/executor.md, "Re-filling a batch"): a sample rejected in the CPU
// stage is redone there, as with one thread. One rejected in the GPU stage of k finds the CPU
// stages of k+1.. already run (the readers past them): the issue thread holds the CPU thread
// between iterations, waits for the device, puts every stateful node back to k's snapshot (a
// reader un-counts the skips of every Setup it undoes, counted_skips.h) and hands k back to the
// CPU thread, which redoes k and the later ones on the slots they had; the fed batches stay in
// those slots.
#include "core/cuda/check.h"
#include "core/error.h"
#include "core/pipeline/executor_state.h"

namespace conveyor::pipeline_internal {

void ExecutorState::CountRefill(Slot& slot, int64_t k, const SampleRejected& e) {
  if (slot.refills >= kMaxRefills) {
    throw InvalidArgument(std::string(e.what()) + "; gave up re-filling the batch after " +
                          std::to_string(kMaxRefills) + " rejected samples in iteration " + std::to_string(k));
  }
  ++slot.refills;
  refilled_iterations.fetch_add(1, std::memory_order_relaxed);
}

void ExecutorState::CpuMain() {
  // Batches fed for an iteration taken up the first time: moved into its slot once the slot's
  // previous GPU work (which may still copy from the old ones) finished.
  std::vector<std::optional<Fed>> incoming(graph.nodes().size());
  for (;;) {
    int64_t k = 0;
    Slot* slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      auto ready = [&] {
        return stop || (!failed && !cpu_failed && !rewinding && started < scheduled &&
                        !slots[started % depth].busy);
      };
      const bool waited = !ready();
      Await(lock, ready);
      if (stop) return;
      // Ahead of the issue thread (or the consumer): the smaller arena.
      const bool light = waited && cpu_pool_ahead != nullptr;
      cpu_stage_pool = light ? cpu_pool_ahead.get() : cpu_pool.get();
      if (light) cpu_stage_ahead_iterations.fetch_add(1, std::memory_order_relaxed);
      k = started++;
      const bool fresh = k == taken;  // else redone after a rewind: its batches are in the slot
      if (fresh) taken = k + 1;
      // Before k's Setup: where a resume at k starts (the GPU stage's part when it starts k).
      IterationSnapshot& snap = snapshots[k];
      snap.cpu = SnapshotStates(true, false);
      slot = &slots[k % depth];
      slot->busy = true;
      slot->done = false;
      slot->cpu_done = false;
      slot->iteration = k;
      slot->error = nullptr;
      if (fresh) {
        slot->refills = 0;
        for (int src : external_sources) {
          incoming[src] = std::move(feeds[src].front());
          feeds[src].pop_front();
        }
      }
      cpu_running = true;
    }
    std::exception_ptr error;
    for (;;) {
      try {
        RunCpuAhead(k, *slot, incoming);
        break;
      } catch (const SampleRejected& e) {
        // Rejected in the CPU stage: only its nodes ran k; put them back and redo it here.
        try {
          CountRefill(*slot, k, e);
          std::vector<std::pair<int, std::string>> states;
          {
            std::lock_guard<std::mutex> lock(mu);
            states = snapshots.at(k).cpu;
          }
          RewindNodes(k, states);
        } catch (...) {
          error = std::current_exception();
          break;
        }
      } catch (...) {
        error = std::current_exception();
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      slot->cpu_done = true;
      slot->error = error;
      if (error) cpu_failed = true;
      cpu_running = false;
    }
    Notify();
  }
}

void ExecutorState::RunCpuAhead(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming) {
  const auto from = Clock::now();
  int64_t waited = 0;
  auto account = [&] {
    const int64_t took = NanosSince(from);
    stage_cpu_ns.fetch_add(took - waited, std::memory_order_relaxed);
    stage_work_ns.fetch_add(took, std::memory_order_relaxed);
  };
  try {
    waited = PrepareSlot(k, slot, incoming, cpu_device_set);
    RunCpuStage(k, slot);
    LookAhead(k, slot);
  } catch (...) {
    account();
    throw;
  }
  account();
}

void ExecutorState::IssueMain() {
  for (;;) {
    int64_t k = 0;
    Slot* slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      // Waiting for a CPU stage the CPU thread has taken up, or for the consumer (Run, a slot).
      const bool for_cpu = issued < started;
      const auto wait_from = Clock::now();
      Await(lock, [&] {
        const Slot& s = slots[issued % depth];
        return stop || (issued < started && s.iteration == issued && s.cpu_done);
      });
      (for_cpu ? stage_cpu_wait_ns : stage_idle_ns).fetch_add(NanosSince(wait_from), std::memory_order_relaxed);
      if (stop) return;
      k = issued;
      slot = &slots[k % depth];
      IterationSnapshot& snap = snapshots[k];
      if (!snap.gpu_taken) {
        snap.gpu = SnapshotStates(false, true);
        snap.gpu_taken = true;
      }
    }
    std::exception_ptr error = slot->error;  // the CPU stage's
    bool redo = false;
    if (!error && has_gpu) {
      const auto from = Clock::now();
      try {
        if (!device_set) {
          CONVEYOR_CUDA_CHECK(cudaSetDevice(device));
          device_set = true;
        }
        RunGpuStage(k, *slot);
      } catch (const SampleRejected& e) {
        try {
          CountRefill(*slot, k, e);
          RewindAhead(k);
          redo = true;
        } catch (...) {
          error = std::current_exception();
        }
      } catch (...) {
        error = std::current_exception();
      }
      const int64_t took = NanosSince(from);
      stage_issue_ns.fetch_add(took, std::memory_order_relaxed);
      stage_work_ns.fetch_add(took, std::memory_order_relaxed);
    }
    if (!redo) Complete(k, *slot, error);
  }
}

void ExecutorState::RewindAhead(int64_t k) {
  int64_t until = 0;
  std::vector<std::pair<int, std::string>> states;
  {
    std::unique_lock<std::mutex> lock(mu);
    rewinding = true;
    Await(lock, [&] { return stop || !cpu_running; });
    if (stop) throw Error(IterationPrefix(k) + "re-filling the batch: the pipeline is shutting down");
    until = started;  // the CPU stages of k .. until - 1 ran
    states = snapshots.at(k).cpu;
    const IterationSnapshot& snap = snapshots.at(k);
    states.insert(states.end(), snap.gpu.begin(), snap.gpu.end());
  }
  // The failed attempt's GPU work (copies, kernels, decodes on the decoders' own streams) must be
  // done before the slot's buffers are written again: a device-wide wait, once per rejected sample.
  try {
    CONVEYOR_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    RethrowWithContext(IterationPrefix(k) + "re-filling the batch: ");
  }
  // One rewind to k's snapshot undoes every Setup since (Operator::RewindIteration).
  RewindNodes(k, states);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t j = k; j < until; ++j) {
      Slot& s = slots[j % depth];
      s.busy = false;  // taken again by the CPU thread, which keeps j's fed batches and re-fill count
      s.cpu_done = false;
      s.error = nullptr;
      if (j > k) snapshots.erase(j);
    }
    started = k;
    cpu_failed = false;
    rewinding = false;
  }
  Notify();
}

}  // namespace conveyor::pipeline_internal
