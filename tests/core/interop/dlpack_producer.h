// A hand-built DLPack producer for tests: owns shape/strides arrays and counts deleter calls.
#pragma once

#include <cstdint>
#include <vector>

#include "core/interop/dlpack_abi.h"

namespace conveyor::interop::testing {

// Fills both managed-tensor kinds from the same fields; the deleter only counts (the producer
// lives on the test's stack), so tests can check "exactly once" and "not before the last holder".
struct DLPackProducer {
  void* data = nullptr;
  dlpack::DLDevice device{dlpack::kDLCPU, 0};
  dlpack::DLDataType dtype{dlpack::kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: send NULL
  uint64_t byte_offset = 0;
  uint64_t flags = 0;
  dlpack::DLPackVersion version{dlpack::kMajorVersion, 0};
  bool null_deleter = false;

  int deleter_calls = 0;
  dlpack::DLManagedTensorVersioned versioned{};
  dlpack::DLManagedTensor legacy{};

  dlpack::DLTensor Tensor() {
    return {data, device, static_cast<int32_t>(shape.size()), dtype,
            shape.empty() ? nullptr : shape.data(), strides.empty() ? nullptr : strides.data(), byte_offset};
  }
  dlpack::DLManagedTensorVersioned* Versioned() {
    versioned = {};
    versioned.version = version;
    versioned.manager_ctx = this;
    versioned.flags = flags;
    versioned.dl_tensor = Tensor();
    if (!null_deleter) {
      versioned.deleter = [](dlpack::DLManagedTensorVersioned* m) {
        ++static_cast<DLPackProducer*>(m->manager_ctx)->deleter_calls;
      };
    }
    return &versioned;
  }
  dlpack::DLManagedTensor* Legacy() {
    legacy = {};
    legacy.manager_ctx = this;
    legacy.dl_tensor = Tensor();
    if (!null_deleter) {
      legacy.deleter = [](dlpack::DLManagedTensor* m) {
        ++static_cast<DLPackProducer*>(m->manager_ctx)->deleter_calls;
      };
    }
    return &legacy;
  }
};

}  // namespace conveyor::interop::testing
