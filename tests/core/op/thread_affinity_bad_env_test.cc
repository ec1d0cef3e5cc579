// A CONVEYOR_THREAD_AFFINITY that is not auto, off or a CPU list this process may use: every pool
// (so every pipeline) refuses to start, saying what was expected and what arrived.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/thread_affinity.h"

namespace conveyor {
namespace {

TEST(ThreadAffinityEnv, ABadSettingFailsEveryPool) {
  ASSERT_EQ(setenv("CONVEYOR_THREAD_AFFINITY", "fast", 1), 0);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the plan is made once; the error stays
    try {
      TbbThreadPool pool(2);
      FAIL() << "a pool started with CONVEYOR_THREAD_AFFINITY=fast";
    } catch (const InvalidArgument& e) {
      EXPECT_STREQ(e.what(), "CONVEYOR_THREAD_AFFINITY: expected auto, off or a CPU list such as 0-13,15; got \"fast\"");
    }
  }
  EXPECT_THROW(ProcessThreadCpus(), InvalidArgument);
}

}  // namespace
}  // namespace conveyor
