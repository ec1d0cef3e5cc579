// Shared by the C API's translation units (conveyor_c.cc, conveyor_c_export.cc, pipeline_capi.cc):
// the tensor handle and the one place where C++ exceptions become status codes. Not installed; C
// callers never see it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/interop/any_tensor.h"
#include "core/tensor/shape.h"

struct conveyor_tensor_s {
  conveyor::interop::AnyTensor tensor;
  // Recorded after the last kernel of ours that read or wrote the data: until it completes the
  // memory must not be released or handed to a writer.
  std::shared_ptr<conveyor::cuda::Event> last_use;
  // Told every consumer stream the data is exported to (DLPack, CUDA Array Interface). Pipeline
  // outputs use it so that their slot is rewritten only after the consumer's work on that stream.
  std::function<void(conveyor::StreamView)> on_consumer_stream;
  // Storage behind the pointers conveyor_tensor_to_cai returns.
  std::vector<int64_t> cai_shape;
  std::vector<int64_t> cai_strides;
  std::string cai_typestr;
};

namespace conveyor::capi {

// Sets this thread's last error to "<function>: <message>" and returns `status`.
conveyor_status_t Fail(conveyor_status_t status, const char* function, const char* message) noexcept;

// Runs `body`, mapping every exception to a status and a thread-local message.
template <typename F>
conveyor_status_t Guard(const char* function, F&& body) noexcept {
  try {
    body();
    return CONVEYOR_OK;
  } catch (const InteropError& e) {
    return Fail(CONVEYOR_ERROR_INTEROP, function, e.what());
  } catch (const InvalidArgument& e) {
    return Fail(CONVEYOR_ERROR_INVALID_ARGUMENT, function, e.what());
  } catch (const CudaError& e) {
    return Fail(CONVEYOR_ERROR_CUDA, function, e.what());
  } catch (const OutOfMemory& e) {
    return Fail(CONVEYOR_ERROR_OUT_OF_MEMORY, function, e.what());
  } catch (const ConfigError& e) {
    return Fail(CONVEYOR_ERROR_CONFIG, function, e.what());
  } catch (const PluginError& e) {
    return Fail(CONVEYOR_ERROR_PLUGIN, function, e.what());
  } catch (const std::bad_alloc&) {
    return Fail(CONVEYOR_ERROR_OUT_OF_MEMORY, function, "host allocation failed");
  } catch (const std::exception& e) {
    return Fail(CONVEYOR_ERROR_INTERNAL, function, e.what());
  } catch (...) {
    return Fail(CONVEYOR_ERROR_INTERNAL, function, "unknown exception");
  }
}

// Throws InvalidArgument naming the parameter when `p` is NULL.
template <typename T>
T* Require(T* p, const char* name) {
  if (p == nullptr) throw InvalidArgument(std::string(name) + ": expected a non-NULL pointer, got NULL");
  return p;
}

// An array description's dims, checked: ndim 0 to CONVEYOR_MAX_DIMS, a known dtype, extents >= 0
// (InvalidArgument naming what arrived otherwise).
inline Shape CheckedDims(int32_t ndim, int32_t dtype, const int64_t* shape) {
  if (ndim < 0 || ndim > CONVEYOR_MAX_DIMS) {
    throw InvalidArgument("ndim: expected 0 to 8, got " + std::to_string(ndim));
  }
  if (conveyor_dtype_name(static_cast<conveyor_dtype_t>(dtype)) == nullptr) {
    throw InvalidArgument("dtype: expected a conveyor_dtype_t (0 to 10), got " + std::to_string(dtype));
  }
  const Shape dims = ndim > 0 ? Shape(Require(shape, "shape"), shape + ndim) : Shape();
  for (int64_t d : dims) {
    if (d < 0) throw InvalidArgument("shape: expected extents >= 0, got " + dims.ToString());
  }
  return dims;
}

// Orders `consumer` after our own pending reads and writes of the data (the ready event is
// handled by the interop export itself), and tells the data's owner about the consumer.
void WaitLastUse(const conveyor_tensor_s& h, std::optional<StreamView> consumer);

// A new handle owning `tensor` (also drops deferred releases whose GPU work finished).
conveyor_tensor_t NewHandle(interop::AnyTensor tensor);

}  // namespace conveyor::capi
