/* Conveyor C API, user functions: the code behind a pipeline's `python_function` nodes, registered
 * by name (a YAML file cannot hold a function). Included by conveyor.h; every convention stated
 * there holds here too (status codes, thread-local last error, out parameters written only on
 * success). Python's conveyor.register_function is built on these calls (docs/python.md).
 *
 *   static int32_t Double(conveyor_function_call_t call, void* user_data) {
 *     conveyor_function_call_desc_t d;
 *     conveyor_function_call_describe(call, &d);            // inputs, outputs, samples
 *     conveyor_tensor_info_t* in = malloc(sizeof(*in) * (d.num_samples + 1));
 *     conveyor_function_call_inputs(call, 0, in);            // one info per sample
 *     for (int32_t s = 0; s < d.num_samples; ++s) {
 *       void* out;
 *       if (conveyor_function_call_output(call, 0, s, in[s].ndim, in[s].shape, CONVEYOR_DTYPE_FLOAT32,
 *                                         NULL, &out) != CONVEYOR_OK) break;  // its message is kept
 *       ... write 2 * in[s] (float32) into out ...
 *     }
 *     free(in);
 *     return 0;                                              // a refused call above fails the node anyway
 *   }
 *   conveyor_register_function("double", Double, NULL, NULL);   // then create and build the pipeline
 *
 *   - op: python_function
 *     inputs: [images]
 *     args: {function: double}
 *     outputs: [doubled]
 *
 * Binding: a node looks its function up when the pipeline is built and keeps it until the pipeline
 * is destroyed, so a registration replaced or removed later does not affect pipelines already
 * built. `destroy(user_data)` (may be NULL) runs exactly once: when the registration was replaced or
 * removed and no built pipeline still uses it, or before conveyor_register_function returns a
 * failure.
 *
 * Calls: on the pipeline's CPU stage (a worker thread of the pipeline, never the application's
 * thread), before the node's outputs exist — the function chooses their shapes and dtype. One call
 * at a time per node: with batch_processing (default) one call per batch, else one per sample,
 * in order. Functions shared by several nodes or pipelines may be called from several threads at
 * once. A call must not destroy its own pipeline (the stage thread would wait for itself).
 * Inputs are read-only host memory, valid until the call returns (copy what you keep). Outputs:
 * every output of every sample of the call must be set with conveyor_function_call_output, and all
 * samples of an output share one dtype (and layout) across the batch.
 */
#ifndef CONVEYOR_CAPI_CONVEYOR_FUNCTION_H_
#define CONVEYOR_CAPI_CONVEYOR_FUNCTION_H_

#include "core/capi/conveyor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct conveyor_function_call_s* conveyor_function_call_t;

/* 0: success. Anything else fails the node's iteration with the message given to
 * conveyor_function_call_set_error (or the last error of a failed call above), which
 * conveyor_pipeline_outputs then returns, led by the node's YAML position. */
typedef int32_t (*conveyor_function_fn)(conveyor_function_call_t call, void* user_data);
typedef void (*conveyor_function_destroy_fn)(void* user_data);

/* Registers `fn` under `name` (non-empty), replacing an earlier registration of that name for
 * pipelines built from now on. */
CONVEYOR_API conveyor_status_t conveyor_register_function(const char* name, conveyor_function_fn fn, void* user_data,
                                                          conveyor_function_destroy_fn destroy);
/* Removes the registration of `name` (CONVEYOR_ERROR_INVALID_ARGUMENT listing the registered names
 * when there is none); built pipelines keep what they bound. */
CONVEYOR_API conveyor_status_t conveyor_unregister_function(const char* name);
/* Writes up to `capacity` bytes of the registered names, one per line and sorted, into `buffer`
 * (NUL-terminated when there is room) and the full size into *size; capacity 0 asks for the size. */
CONVEYOR_API conveyor_status_t conveyor_registered_functions(char* buffer, size_t capacity, size_t* size);

typedef struct conveyor_function_call_desc {
  int32_t num_inputs;
  int32_t num_outputs;
  int32_t num_samples;  /* in this call: the batch (batch_processing), or 1 */
  int32_t first_sample; /* the batch index of this call's sample 0 */
  int32_t batch_processing; /* the node's argument: 1 one call per batch, 0 one per sample */
  int64_t iteration;
  const char* node;     /* the node's name (valid during the call) */
  const char* function; /* the name it was registered under */
} conveyor_function_call_desc_t;

CONVEYOR_API conveyor_status_t conveyor_function_call_describe(conveyor_function_call_t call,
                                                               conveyor_function_call_desc_t* out);
/* Input `input` of the call's samples: infos[0 .. num_samples) (CONVEYOR_DEVICE_CPU, or _CUDA_HOST
 * for pinned memory; read_only 1; dense row-major strides). */
CONVEYOR_API conveyor_status_t conveyor_function_call_inputs(conveyor_function_call_t call, int32_t input,
                                                             conveyor_tensor_info_t* infos);
/* The layout of input `input` ("HWC"; "" when it has none), valid during the call. */
CONVEYOR_API conveyor_status_t conveyor_function_call_input_layout(conveyor_function_call_t call, int32_t input,
                                                                   const char** out);
/* Sets output `output` of the call's sample `sample` to a new dense row-major tensor and gives its
 * host memory in *data, to fill before the call returns (NULL when it has no elements). `layout`:
 * NULL or "" for none (the node's output_layouts argument, when set, wins). Refused: an index out
 * of range, a sample set twice, a dtype or layout other than the one this output already has in
 * this batch, a layout whose length is not ndim. */
CONVEYOR_API conveyor_status_t conveyor_function_call_output(conveyor_function_call_t call, int32_t output,
                                                             int32_t sample, int32_t ndim, const int64_t* shape,
                                                             conveyor_dtype_t dtype, const char* layout, void** data);
/* The message the node's error carries when the function returns non-zero (a traceback, say). */
CONVEYOR_API conveyor_status_t conveyor_function_call_set_error(conveyor_function_call_t call, const char* message);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CONVEYOR_CAPI_CONVEYOR_FUNCTION_H_ */
