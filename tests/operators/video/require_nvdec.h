// REQUIRE_NVDEC() for the NVDEC tests: skips without a GPU (CONVEYOR_REQUIRE_GPU), fails where a
// GPU has no NVDEC (the driver's video library did not load), naming why.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "operators/video/nvdec/nvdec_loader.h"
#include "tests/util/gpu_test.h"

#define REQUIRE_NVDEC()                                                                         \
  do {                                                                                          \
    CONVEYOR_REQUIRE_GPU();                                                                     \
    std::string why_;                                                                           \
    ASSERT_NE(::conveyor::ops::video::SharedNvdec(&why_), nullptr) << "a GPU but no NVDEC: " << why_; \
  } while (0)
