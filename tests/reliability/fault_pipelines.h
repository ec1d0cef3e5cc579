// The pipelines of the fault tests: testing.pattern (samples of 1 to 3000 floats whose sizes and
// values depend on iteration and sample) → reliability.faulty (the plugin operator in
// faulty_plugin.cc, a copy that misbehaves on request).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "core/tensor/tensor_list.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"

namespace conveyor::testing {

inline const std::string kReliabilityDir = "tests/reliability";
inline const std::string kFaultyPlugin = "libreliability_faulty.so";

struct FaultPipeline {
  std::string device = "cpu";         // the pipeline's device
  std::string faulty_device = "cpu";  // where reliability.faulty runs
  std::string faulty_args;            // e.g. "fail_at: 3, sleep_ms: 20"
  int prefetch = 2;
  int batch = 4;
  bool capture = false;
  std::string more_ops;              // YAML lines appended to the op list (they may read `copied`)
  std::string outputs = "copied";    // the pipeline's output list
};

inline constexpr int64_t kMinSize = 1;
inline constexpr int64_t kMaxSize = 3000;

// YAML for `p`: `values` (the pattern) → `copied` (reliability.faulty's copy), then `more_ops`.
inline std::string FaultYaml(const FaultPipeline& p) {
  return "pipeline: {name: faults, batch_size: " + std::to_string(p.batch) + ", device: " + p.device +
         ", num_threads: 2, prefetch_depth: " + std::to_string(p.prefetch) + ", seed: 11, graph_capture: " +
         (p.capture ? "true" : "false") + "}\n" + "plugins: [" + kFaultyPlugin + "]\n" +
         "ops:\n"
         "  - {op: testing.pattern, name: pattern, args: {min_size: " + std::to_string(kMinSize) +
         ", max_size: " + std::to_string(kMaxSize) + "}, outputs: [values]}\n"
         "  - {op: reliability.faulty, name: faulty, device: " +
         p.faulty_device + ", inputs: [values], args: {" + p.faulty_args + "}, outputs: [copied]}\n" +
         p.more_ops + "outputs: [" + p.outputs + "]\n";
}

// How many Run calls of reliability.faulty are in progress (the plugin's own counter; the plugin
// must have been loaded, which building a FaultYaml pipeline does).
inline int FaultyRunning() {
  void* handle = ::dlopen((kReliabilityDir + "/" + kFaultyPlugin).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) {
    ADD_FAILURE() << "the reliability plugin is not loaded: " << ::dlerror();
    return 0;
  }
  auto* running = reinterpret_cast<int (*)()>(::dlsym(handle, "reliability_faulty_running"));
  ::dlclose(handle);  // drops the reference NOLOAD took; the loader's own keeps it loaded
  if (running == nullptr) {
    ADD_FAILURE() << "reliability_faulty_running not found";
    return 0;
  }
  return running();
}

// Runs `body` on another thread and fails (instead of hanging the suite) when it takes longer.
template <typename F>
void WithinSeconds(int seconds, F body) {
  std::packaged_task<void()> task(body);
  std::future<void> done = task.get_future();
  std::thread thread(std::move(task));
  if (done.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    thread.detach();  // the process is about to report the failure; do not join a hung thread
    FAIL() << "did not finish within " << seconds << " s (a hang)";
  }
  thread.join();
  done.get();  // rethrows the body's exception, if any
}

// `list` holds iteration `k`'s pattern.
inline void ExpectPattern(const TensorListCPU& list, int64_t k) {
  ASSERT_EQ(list.dtype(), DType::kFloat32);
  ASSERT_GT(list.num_samples(), 0);
  for (int s = 0; s < list.num_samples(); ++s) {
    const int64_t n = PatternSize(k, s, kMinSize, kMaxSize, -1);
    ASSERT_EQ(list.shape(s), Shape{n}) << "iteration " << k << " sample " << s;
    const float* p = static_cast<const float*>(list.raw_sample(s));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(p[i], PatternValue(k, s, i)) << "iteration " << k << " sample " << s << " element " << i;
    }
  }
}

}  // namespace conveyor::testing
