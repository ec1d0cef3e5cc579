// The C API of user functions (conveyor_function.h): registration, and what a call reads and
// writes. A refused call inside a function is also remembered on the call, so the node fails with
// that message even when the function ignores the status.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/capi/capi_internal.h"
#include "core/capi/conveyor_function.h"
#include "core/capi/function_call.h"
#include "core/capi/function_registry.h"
#include "core/error.h"
#include "core/memory/memory_kind.h"

namespace conveyor::capi {
namespace {

// Guard, plus the refusal kept on the call (the first one wins: later ones tend to follow from it).
template <typename F>
conveyor_status_t GuardCall(const char* function, conveyor_function_call_t call, F&& body) noexcept {
  const conveyor_status_t status = Guard(function, std::forward<F>(body));
  if (status != CONVEYOR_OK && call != nullptr && call->refused.empty()) {
    try {
      call->refused = conveyor_last_error();
    } catch (...) {
      // No memory for the copy: the node still fails on the missing output.
    }
  }
  return status;
}

void CheckIndex(int32_t index, int32_t count, const char* what) {
  if (index < 0 || index >= count) {
    throw InvalidArgument(std::string(what) + ": expected 0 to " + std::to_string(count - 1) + ", got " +
                          std::to_string(index));
  }
}

}  // namespace
}  // namespace conveyor::capi

using namespace conveyor;        // NOLINT: the C functions below are thin shims
using namespace conveyor::capi;  // NOLINT

extern "C" {

conveyor_status_t conveyor_register_function(const char* name, conveyor_function_fn fn, void* user_data,
                                             conveyor_function_destroy_fn destroy) {
  // Until the registry owns it, the user data is released when this call fails.
  struct PendingDestroy {
    conveyor_function_destroy_fn fn;
    void* data;
    ~PendingDestroy() {
      if (fn != nullptr) fn(data);
    }
  } pending{destroy, user_data};
  return Guard(__func__, [&] {
    Require(name, "name");
    if (fn == nullptr) throw InvalidArgument("fn: expected a function, got NULL");
    if (name[0] == '\0') throw InvalidArgument("name: expected a non-empty name, got \"\"");
    auto function = std::make_shared<RegisteredFunction>(name, fn, user_data, destroy);
    pending.fn = nullptr;  // `function` runs destroy from here on
    FunctionRegistry::Global().Register(std::move(function));
  });
}

conveyor_status_t conveyor_unregister_function(const char* name) {
  return Guard(__func__, [&] { FunctionRegistry::Global().Unregister(Require(name, "name")); });
}

conveyor_status_t conveyor_registered_functions(char* buffer, size_t capacity, size_t* size) {
  return Guard(__func__, [&] {
    Require(size, "size");
    std::string text;
    for (const std::string& name : FunctionRegistry::Global().Names()) text += name + "\n";
    if (capacity > 0) {
      Require(buffer, "buffer");
      if (capacity < text.size()) {
        throw InvalidArgument("capacity: expected at least " + std::to_string(text.size()) + " bytes, got " +
                              std::to_string(capacity));
      }
      std::memcpy(buffer, text.data(), text.size());
      if (capacity > text.size()) buffer[text.size()] = '\0';
    }
    *size = text.size();
  });
}

conveyor_status_t conveyor_function_call_describe(conveyor_function_call_t call, conveyor_function_call_desc_t* out) {
  return GuardCall(__func__, call, [&] {
    Require(call, "call");
    Require(out, "out");
    conveyor_function_call_desc_t d{};
    d.num_inputs = static_cast<int32_t>(call->inputs.size());
    d.num_outputs = call->outputs->num_outputs();
    d.num_samples = call->num_samples;
    d.first_sample = call->first_sample;
    d.batch_processing = call->batch_processing ? 1 : 0;
    d.iteration = call->iteration;
    d.node = call->node.c_str();
    d.function = call->function.c_str();
    *out = d;
  });
}

conveyor_status_t conveyor_function_call_inputs(conveyor_function_call_t call, int32_t input,
                                                conveyor_tensor_info_t* infos) {
  return GuardCall(__func__, call, [&] {
    Require(call, "call");
    CheckIndex(input, static_cast<int32_t>(call->inputs.size()), "input");
    if (call->num_samples > 0) Require(infos, "infos");
    const TensorListCPU& list = *call->inputs[static_cast<size_t>(input)];
    const bool pinned = list.buffer().kind() == MemoryKind::kPinned;
    for (int s = 0; s < call->num_samples; ++s) {
      const int b = call->first_sample + s;
      const Shape& shape = list.shape(b);
      conveyor_tensor_info_t info{};
      info.ndim = shape.ndim();
      int64_t stride = 1;
      for (int d = shape.ndim() - 1; d >= 0; --d) {
        info.shape[d] = shape[d];
        info.strides[d] = stride;
        stride *= shape[d];
      }
      info.dtype = static_cast<conveyor_dtype_t>(list.dtype());
      info.device_type = pinned ? CONVEYOR_DEVICE_CUDA_HOST : CONVEYOR_DEVICE_CPU;
      info.device_id = pinned ? list.buffer().device() : 0;
      info.data = shape.num_elements() == 0 ? nullptr : list.raw_sample(b);
      info.read_only = 1;
      infos[s] = info;
    }
  });
}

conveyor_status_t conveyor_function_call_input_layout(conveyor_function_call_t call, int32_t input, const char** out) {
  return GuardCall(__func__, call, [&] {
    Require(call, "call");
    Require(out, "out");
    CheckIndex(input, static_cast<int32_t>(call->input_layouts.size()), "input");
    *out = call->input_layouts[static_cast<size_t>(input)].c_str();
  });
}

conveyor_status_t conveyor_function_call_output(conveyor_function_call_t call, int32_t output, int32_t sample,
                                                int32_t ndim, const int64_t* shape, conveyor_dtype_t dtype,
                                                const char* layout, void** data) {
  return GuardCall(__func__, call, [&] {
    Require(call, "call");
    Require(data, "data");
    CheckIndex(sample, call->num_samples, "sample");
    const Shape dims = CheckedDims(ndim, dtype, shape);
    const Layout l = layout == nullptr ? Layout() : Layout(std::string_view(layout));
    *data = call->outputs->Set(output, call->first_sample + sample, dims, static_cast<DType>(dtype), l);
  });
}

conveyor_status_t conveyor_function_call_set_error(conveyor_function_call_t call, const char* message) {
  return Guard(__func__, [&] {
    Require(call, "call");
    call->error = Require(message, "message");
  });
}

}  // extern "C"
