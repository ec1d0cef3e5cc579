// Move-only owners of C API handles for tests: a failing ASSERT leaks nothing, and `h = {}`
// releases at once (the moved-from side frees what the target held).
#pragma once

#include <utility>

#include "core/capi/conveyor.h"

namespace conveyor::capi::testing {

template <typename T, void (*kFree)(T)>
struct Owner {
  T h = nullptr;
  Owner() = default;
  Owner(Owner&& other) noexcept : h(std::exchange(other.h, nullptr)) {}
  Owner& operator=(Owner&& other) noexcept {
    std::swap(h, other.h);
    return *this;
  }
  ~Owner() { kFree(h); }
};

using PipelineHandle = Owner<conveyor_pipeline_t, conveyor_pipeline_destroy>;
using OutputsHandle = Owner<conveyor_outputs_t, conveyor_outputs_release>;
using TensorHandle = Owner<conveyor_tensor_t, conveyor_tensor_release>;
using DLPackExport = Owner<DLManagedTensorVersioned*, conveyor_dlpack_versioned_delete>;

}  // namespace conveyor::capi::testing
