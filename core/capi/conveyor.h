/* Conveyor C API: a pure C ABI over the C++ core, for inference servers, other languages and the
 * ctypes Python bridge (python/conveyor). Built as libconveyor_c.so, which needs nothing from
 * Python.
 *
 * Pipelines (create from YAML, feed, run, outputs) are declared in conveyor_pipeline.h, and user
 * functions (python_function nodes) in conveyor_function.h; this header includes both.
 *
 * Conventions (the pipeline functions follow them too):
 * - ABI: conveyor_abi_version() returns CONVEYOR_ABI_VERSION of the library that was built; a
 *   caller compiled against another value must not call anything else. The number changes when
 *   any existing signature, struct layout or enum value changes; functions are only ever added.
 * - Errors: every function that can fail returns conveyor_status_t (CONVEYOR_OK == 0). On failure
 *   conveyor_last_error() returns a message for the calling thread saying what was expected, what
 *   arrived and where; successful calls leave it unchanged. No C++ exception ever crosses this
 *   boundary.
 * - Out parameters are written only on success.
 * - Handles are opaque pointers made by a *_create / *_from_* / *_empty function and freed by the
 *   matching *_release / *_destroy function; freeing NULL is a no-op. A handle may be used from
 *   any thread, but not from two threads at once.
 * - Streams are int64 interop codes, as in DLPack and the CUDA Array Interface: -1 = none (no
 *   synchronisation), 1 = the legacy default stream, 2 = the per-thread default stream, any other
 *   positive value = a cudaStream_t. 0 is always rejected.
 */
#ifndef CONVEYOR_CAPI_CONVEYOR_H_
#define CONVEYOR_CAPI_CONVEYOR_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CONVEYOR_API __attribute__((visibility("default")))
#else
#define CONVEYOR_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CONVEYOR_ABI_VERSION 1
#define CONVEYOR_MAX_DIMS 8

/* ---- status and errors ------------------------------------------------------------------------ */

typedef enum conveyor_status {
  CONVEYOR_OK = 0,
  CONVEYOR_ERROR_INVALID_ARGUMENT = 1, /* a documented contract was broken */
  CONVEYOR_ERROR_INTEROP = 2,          /* a DLPack / CUDA Array Interface rule was broken */
  CONVEYOR_ERROR_CUDA = 3,             /* a CUDA call failed */
  CONVEYOR_ERROR_OUT_OF_MEMORY = 4,
  CONVEYOR_ERROR_CONFIG = 5,           /* a pipeline definition (YAML) is wrong: file:line:col */
  CONVEYOR_ERROR_PLUGIN = 6,           /* a plugin failed to load */
  CONVEYOR_ERROR_INTERNAL = 100        /* a bug in Conveyor: please report the message */
} conveyor_status_t;

CONVEYOR_API uint32_t conveyor_abi_version(void);
/* The last failure's message on this thread ("" if none); valid until the next failing call on
 * this thread. */
CONVEYOR_API const char* conveyor_last_error(void);
/* "CONVEYOR_OK", "CONVEYOR_ERROR_INTEROP", ... ("unknown status" otherwise). */
CONVEYOR_API const char* conveyor_status_name(conveyor_status_t status);

/* ---- element types and devices ---------------------------------------------------------------- */

typedef enum conveyor_dtype {
  CONVEYOR_DTYPE_BOOL = 0,
  CONVEYOR_DTYPE_UINT8 = 1,
  CONVEYOR_DTYPE_INT8 = 2,
  CONVEYOR_DTYPE_UINT16 = 3,
  CONVEYOR_DTYPE_INT16 = 4,
  CONVEYOR_DTYPE_INT32 = 5,
  CONVEYOR_DTYPE_INT64 = 6,
  CONVEYOR_DTYPE_FLOAT16 = 7,
  CONVEYOR_DTYPE_BFLOAT16 = 8,
  CONVEYOR_DTYPE_FLOAT32 = 9,
  CONVEYOR_DTYPE_FLOAT64 = 10,
  /* Not a type: makes every int32 value a conveyor_dtype_t, so a wrong value from a caller is
     refused with an error instead of being undefined behaviour (C++ enum range rules). */
  CONVEYOR_DTYPE_MAX_ENUM_ = 0x7FFFFFFF
} conveyor_dtype_t;

/* "bool", "uint8", ..., "float64"; NULL for a value outside the enum. */
CONVEYOR_API const char* conveyor_dtype_name(conveyor_dtype_t dtype);

/* Device types are DLPack's codes. */
#define CONVEYOR_DEVICE_CPU 1          /* pageable host memory */
#define CONVEYOR_DEVICE_CUDA 2         /* device memory */
#define CONVEYOR_DEVICE_CUDA_HOST 3    /* pinned host memory, also readable by kernels */
#define CONVEYOR_DEVICE_CUDA_MANAGED 13

/* ---- streams ---------------------------------------------------------------------------------- */

/* A non-blocking CUDA stream owned by Conveyor. */
typedef struct conveyor_stream_s* conveyor_stream_t;

CONVEYOR_API conveyor_status_t conveyor_stream_create(int32_t device, conveyor_stream_t* out);
/* The stream's interop code (its cudaStream_t value), for __dlpack__(stream=...) and friends. */
CONVEYOR_API conveyor_status_t conveyor_stream_code(conveyor_stream_t stream, int64_t* out);
/* Blocks the host until the stream's work is done (tests and shutdown). */
CONVEYOR_API conveyor_status_t conveyor_stream_synchronize(conveyor_stream_t stream);
CONVEYOR_API void conveyor_stream_destroy(conveyor_stream_t stream);

/* ---- tensors ---------------------------------------------------------------------------------- */

typedef struct conveyor_tensor_s* conveyor_tensor_t;

/* DLPack's managed tensors (declared by dlpack.h; only pointers cross this API). */
struct DLManagedTensor;
struct DLManagedTensorVersioned;

/* Zero-copy import of a DLPack managed tensor. Ownership passes to Conveyor in every case: on
 * success the producer's deleter runs once, when the last user of the data lets go (tensor handles,
 * exports and pending GPU work); on failure it has run before the call returns. A major-version
 * mismatch calls the deleter and reads nothing else.
 * `ready_stream`: the stream the producer was asked to make the data ready on (the `stream` given
 * to __dlpack__), or -1; later Conveyor work orders itself after it with an event. */
CONVEYOR_API conveyor_status_t conveyor_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned* managed,
                                                                     int64_t ready_stream,
                                                                     conveyor_tensor_t* out);
CONVEYOR_API conveyor_status_t conveyor_tensor_from_dlpack(struct DLManagedTensor* managed, int64_t ready_stream,
                                                           conveyor_tensor_t* out);

/* The fields of a CUDA Array Interface (v2 or v3) dict. */
typedef struct conveyor_cai {
  int32_t version;
  int32_t ndim;
  const int64_t* shape;   /* ndim extents */
  const int64_t* strides; /* ndim byte strides, or NULL: C-contiguous */
  const char* typestr;    /* "<f4", "|u1", ... */
  uintptr_t data;         /* device-accessible address; 0 only for zero-size arrays */
  int32_t read_only;
  int32_t has_stream;     /* 0: `stream` absent or None (no synchronisation needed) */
  int64_t stream;         /* the producer's stream when has_stream (1, 2 or a handle; 0 is rejected) */
  int32_t has_mask;       /* nonzero: `mask` present and not None (rejected) */
} conveyor_cai_t;

/* Called once when Conveyor no longer needs memory that a CUDA Array Interface described. */
typedef void (*conveyor_release_fn)(void* context);

/* Zero-copy import. `release` (may be NULL) is called exactly once in every case: when the last
 * user of the data lets go, or before a failing call returns. With a producer stream, an event
 * recorded on it orders all later Conveyor work after the producer's. */
CONVEYOR_API conveyor_status_t conveyor_tensor_from_cai(const conveyor_cai_t* cai, conveyor_release_fn release,
                                                        void* release_context, conveyor_tensor_t* out);

/* A new contiguous, uninitialised tensor. device_type: CONVEYOR_DEVICE_*; device_id is used for
 * CONVEYOR_DEVICE_CUDA. Device memory is allocated in the order of `stream` (-1: usable at once). */
CONVEYOR_API conveyor_status_t conveyor_tensor_empty(int32_t ndim, const int64_t* shape, conveyor_dtype_t dtype,
                                                     int32_t device_type, int32_t device_id, int64_t stream,
                                                     conveyor_tensor_t* out);

/* Zero-copy export; the caller owns the result and hands it on (or calls its deleter). The
 * consumer's stream (-1: none) is ordered after the tensor's pending writes by an event wait; the
 * host never blocks, except for pageable host memory, which a consumer reads on the host. The
 * legacy form refuses read-only tensors (it cannot mark them). */
CONVEYOR_API conveyor_status_t conveyor_tensor_to_dlpack_versioned(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                                   struct DLManagedTensorVersioned** out);
CONVEYOR_API conveyor_status_t conveyor_tensor_to_dlpack(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                         struct DLManagedTensor** out);
/* The same for a consumer that names the device it wants (DLPack's __dlpack__(dl_device=...)):
 * (device_type, device_id) is where the data lives, or (CONVEYOR_DEVICE_CPU, 0) for pinned memory
 * (CONVEYOR_DEVICE_CUDA_HOST): page-locked memory is host memory, so it is then exported as kDLCPU
 * (PyTorch and NumPy refuse kDLCUDAHost). A CPU consumer has no stream: consumer_stream must be
 * -1, and the host waits for the tensor's pending writes before the call returns. Any other
 * device is CONVEYOR_ERROR_INVALID_ARGUMENT (exports never copy). */
CONVEYOR_API conveyor_status_t conveyor_tensor_to_dlpack_versioned_on(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                                      int32_t device_type, int32_t device_id,
                                                                      struct DLManagedTensorVersioned** out);
CONVEYOR_API conveyor_status_t conveyor_tensor_to_dlpack_on(conveyor_tensor_t tensor, int64_t consumer_stream,
                                                            int32_t device_type, int32_t device_id,
                                                            struct DLManagedTensor** out);
/* Calls a managed tensor's deleter if it has one (for bindings that cannot call through a
 * function pointer, such as a Python capsule destructor); NULL is a no-op. */
CONVEYOR_API void conveyor_dlpack_versioned_delete(struct DLManagedTensorVersioned* managed);
CONVEYOR_API void conveyor_dlpack_delete(struct DLManagedTensor* managed);

/* CUDA Array Interface v3 fields for a device-accessible tensor. `stream` (-1: none) is ours: it
 * is made to wait for the tensor's pending writes and is reported in out->stream; with -1 the host
 * waits instead and has_stream is 0. The pointers in *out stay valid until the next call of this
 * function on the same handle or its release. bfloat16 has no typestr (CONVEYOR_ERROR_INTEROP). */
CONVEYOR_API conveyor_status_t conveyor_tensor_to_cai(conveyor_tensor_t tensor, int64_t stream, conveyor_cai_t* out);

typedef struct conveyor_tensor_info {
  int32_t ndim;
  int64_t shape[CONVEYOR_MAX_DIMS];
  int64_t strides[CONVEYOR_MAX_DIMS]; /* in elements */
  conveyor_dtype_t dtype;
  int32_t device_type; /* CONVEYOR_DEVICE_* */
  int32_t device_id;
  /* The first element: a host address for CPU and CUDA_HOST tensors, a device address for CUDA
   * and CUDA_MANAGED ones. NULL for zero-size tensors without storage. */
  void* data;
  int32_t read_only;
} conveyor_tensor_info_t;

CONVEYOR_API conveyor_status_t conveyor_tensor_info(conveyor_tensor_t tensor, conveyor_tensor_info_t* out);

/* Drops this handle. The data stays alive while exports or queued GPU work still use it. */
CONVEYOR_API void conveyor_tensor_release(conveyor_tensor_t tensor);

/* ---- a demonstrator GPU operation ------------------------------------------------------------- */

/* out = a * in + b, elementwise, on `stream` (not -1), for float32 tensors of equal shape in
 * device-accessible memory (device, managed, or pinned through its mapped address); any strides.
 * `stream` first waits (on the device) for both tensors' pending writes; afterwards `out` is
 * ready after this work. `out` must be writable (CONVEYOR_ERROR_INVALID_ARGUMENT otherwise). */
CONVEYOR_API conveyor_status_t conveyor_scale_add(conveyor_tensor_t out, conveyor_tensor_t in, float a, float b,
                                                  int64_t stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The pipeline API and user functions (each includes this header first, so any may be included on
 * its own). */
#include "core/capi/conveyor_pipeline.h"
#include "core/capi/conveyor_function.h"

#endif /* CONVEYOR_CAPI_CONVEYOR_H_ */
