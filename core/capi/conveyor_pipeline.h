/* Conveyor C API, pipelines: create from YAML, build, feed external sources, run, and take each
 * iteration's outputs as tensor handles (exported zero-copy with conveyor_tensor_to_dlpack_* or
 * conveyor_tensor_to_cai). Included by conveyor.h; every convention stated there holds here too
 * (status codes, thread-local last error, out parameters written only on success, NULL frees
 * nothing, interop stream codes).
 *
 *   conveyor_pipeline_t p;
 *   conveyor_pipeline_create_from_file("pipelines/train.yaml", &p);
 *   conveyor_pipeline_build(p);                   // primes prefetch_depth iterations
 *   for (;;) {
 *     conveyor_outputs_t out;
 *     conveyor_pipeline_outputs(p, &out);         // blocks until the oldest iteration is ready
 *     conveyor_tensor_t images;
 *     conveyor_outputs_get(out, 0, -1, &images);  // the whole (uniform) batch, zero-copy
 *     conveyor_outputs_release(out);
 *     conveyor_tensor_to_dlpack_versioned(images, my_stream, &managed);  // hand it on
 *     conveyor_tensor_release(images);
 *     conveyor_pipeline_run(p);                   // schedule one more iteration
 *   }
 *   conveyor_pipeline_destroy(p);
 *
 * Lifetime of outputs (zero-copy, no data is copied out of the pipeline): an iteration's outputs
 * live in one prefetch slot, which returns to the ring — to be rewritten by a later iteration —
 * only when the outputs handle AND every tensor handle and DLPack export taken from it are gone.
 * Every consumer stream given to an export (and to conveyor_outputs_wait) is also waited for: the
 * slot is rewritten only after the work queued on those streams before the last holder let go.
 * So holding an output tensor holds its slot: with prefetch_depth D, at most D iterations' outputs
 * can be held at once, and conveyor_pipeline_outputs fails (naming the slot and the iteration
 * holding it) rather than wait forever for an (D+1)-th. A consumer that exports with stream -1
 * (no synchronisation) and reads the data on the device must finish those reads before it lets
 * go. Consumer streams must outlive the release of the data exported to them.
 *
 * Outputs, pipelines and tensors may be released in any order: outputs keep what they reference
 * alive after their pipeline is destroyed.
 */
#ifndef CONVEYOR_CAPI_CONVEYOR_PIPELINE_H_
#define CONVEYOR_CAPI_CONVEYOR_PIPELINE_H_

#include "core/capi/conveyor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct conveyor_pipeline_s* conveyor_pipeline_t;
typedef struct conveyor_outputs_s* conveyor_outputs_t;

/* ---- creation --------------------------------------------------------------------------------- */

/* Loads a pipeline file (relative paths in it are relative to the file). Every mistake in the file
 * fails with CONVEYOR_ERROR_CONFIG and a message starting "<path>:<line>:<col>: "; a file that
 * cannot be read fails with CONVEYOR_ERROR_CONFIG naming the path. Nothing runs before build. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_create_from_file(const char* path, conveyor_pipeline_t* out);
/* The same from YAML text; messages name "<string>:<line>:<col>". `base_dir` resolves relative
 * paths in the text (NULL or "": the current directory). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_create_from_string(const char* yaml, const char* base_dir,
                                                                    conveyor_pipeline_t* out);
/* Stops the pipeline (after the operator now running returns) and frees it; never hangs. Outputs
 * and tensors taken from it stay valid until released. */
CONVEYOR_API void conveyor_pipeline_destroy(conveyor_pipeline_t pipeline);

/* ---- running ---------------------------------------------------------------------------------- */

/* Builds the graph (CONVEYOR_ERROR_CONFIG / _PLUGIN), creates operators, streams and slots, and
 * schedules the first prefetch_depth iterations — with external_source nodes, only as many as have
 * been fed. CONVEYOR_ERROR_INVALID_ARGUMENT when called twice. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_build(conveyor_pipeline_t pipeline);
/* Schedules one more iteration. CONVEYOR_ERROR_INVALID_ARGUMENT before build, or when an
 * external_source node has no fed batch left for it. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_run(conveyor_pipeline_t pipeline);
/* The outputs of the oldest scheduled iteration not yet returned; blocks until they are computed
 * (on the host for the CPU stage; GPU work may still be queued: exports and conveyor_outputs_wait
 * order consumers after it). An operator's error of that iteration is returned here, its message
 * naming the iteration, node and operator. CONVEYOR_ERROR_INVALID_ARGUMENT before build, when
 * nothing is scheduled, or when the slot the iteration needs is still held (see the lifetime
 * rules above). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_outputs(conveyor_pipeline_t pipeline, conveyor_outputs_t* out);

/* One training-loop step in one call (the Python iterator's: one crossing of the C boundary per
 * batch): conveyor_pipeline_outputs, then for each output i < *count a tensor of the whole batch
 * in tensors[i] with its conveyor_tensor_info in infos[i] when its samples share one shape (NULL
 * and a zeroed info when not), then conveyor_pipeline_run. *outputs receives the outputs handle
 * when some output is not uniform (take its samples with conveyor_outputs_get, then release it),
 * else NULL. `capacity`: the length of tensors and infos; CONVEYOR_ERROR_INVALID_ARGUMENT when the
 * pipeline has more outputs (nothing is consumed then). On any error no tensor is handed out. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_next(conveyor_pipeline_t pipeline, int32_t capacity,
                                                      conveyor_tensor_t* tensors, conveyor_tensor_info_t* infos,
                                                      int32_t* count, conveyor_outputs_t* outputs);

/* The samples one epoch of the reader node `reader` delivers (its shard; padded to whole batches
 * with pad_last_batch): batches per epoch = ceil(*out / batch_size). CONVEYOR_ERROR_INVALID_ARGUMENT
 * before build, for an unknown node, or a node that is not a reader. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_epoch_size(conveyor_pipeline_t pipeline, const char* reader,
                                                            int64_t* out);

/* ---- checkpoint / resume (docs/distributed.md) ------------------------------------------------ */

/* The state from which the first iteration not yet returned by conveyor_pipeline_outputs is
 * reproduced bit for bit (prefetched iterations accounted for; never waits for the stage): a few
 * hundred bytes of versioned text. Writes up to `capacity` bytes into `buffer` (NUL-terminated
 * when there is room) and the full size into *size; call with buffer NULL and capacity 0 to learn
 * the size (the state changes only when outputs are taken). CONVEYOR_ERROR_INVALID_ARGUMENT
 * before build, or when capacity is non-zero but too small. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_checkpoint(conveyor_pipeline_t pipeline, char* buffer,
                                                            size_t capacity, size_t* size);
/* Before build: start from a checkpoint (`size` bytes at `data`). A malformed one fails here; build
 * fails with CONVEYOR_ERROR_INVALID_ARGUMENT and a message saying what differs when it is of
 * another pipeline (seed, batch size, nodes, a reader's dataset size or shard). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_resume_from(conveyor_pipeline_t pipeline, const char* data,
                                                             size_t size);

/* ---- skipped samples (decoders' on_error: skip; docs/decoding.md) ---------------------------- */

/* The files skipped so far instead of failing the pipeline, one line per file in the order first
 * met: "node\tfile\ttimes\treason\n" (tabs and newlines inside a field written as spaces); *count
 * (may be NULL) gets the total number of skips. Counted when the CPU stage reads the files, up to
 * prefetch_depth iterations ahead of the outputs taken. Same buffer protocol as
 * conveyor_pipeline_checkpoint (capacity 0: size only). CONVEYOR_ERROR_INVALID_ARGUMENT before build. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_skipped(conveyor_pipeline_t pipeline, int64_t* count, char* buffer,
                                                         size_t capacity, size_t* size);

/* ---- where the time goes ------------------------------------------------------------------ */

/* The stage thread's time so far: *iterations (stages finished), and ns[0..4] the nanoseconds, summed
 * over them, spent in the CPU stage, issuing the GPU stage, host-waiting for a slot's previous GPU
 * work (the GPU is the bottleneck) and idle (waiting for the consumer: outputs() / run()). The
 * difference of two calls is the split over the span between them (e.g. timed blocks, without
 * warm-up). CONVEYOR_ERROR_INVALID_ARGUMENT before build. */
CONVEYOR_API conveyor_status_t conveyor_pipeline_stage_times(conveyor_pipeline_t pipeline, int64_t* iterations,
                                                             int64_t ns[4]);

/* The external_source nodes, in file order (names valid while the pipeline lives). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_external_source_count(conveyor_pipeline_t pipeline,
                                                                       int32_t* out);
CONVEYOR_API conveyor_status_t conveyor_pipeline_external_source_name(conveyor_pipeline_t pipeline,
                                                                      int32_t index, const char** out);

/* ---- feeding external_source nodes ------------------------------------------------------------ */

/* Queues one iteration's batch for the external_source node `node`; before or after build. Feed
 * every external_source once per iteration, then conveyor_pipeline_run (after build).
 * The data must have the node's `dtype` (and `ndim` per sample when the node sets it); a node that
 * runs on the CPU takes host memory (CPU or pinned), a GPU node takes host or device memory of the
 * pipeline's device. The handles stay the caller's: Conveyor keeps what it needs alive itself, and
 * waits for each tensor's pending writes (its ready stream) on the device, never on the host.
 *
 * _batch: one tensor of at least 1 dimension whose first dimension is the batch; sample i is
 * tensor[i]. Zero-copy when it is contiguous and a sample is a multiple of 16 bytes; otherwise
 * copied (device tensors must then be contiguous). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_feed_batch(conveyor_pipeline_t pipeline, const char* node,
                                                            conveyor_tensor_t batch);
/* _samples: `count` tensors (count >= 0), one per sample, shapes may differ; all of one dtype and
 * all on the host or all on the device. Copied into one batch (device tensors must be contiguous). */
CONVEYOR_API conveyor_status_t conveyor_pipeline_feed_samples(conveyor_pipeline_t pipeline, const char* node,
                                                              const conveyor_tensor_t* samples, int32_t count);

/* ---- outputs ---------------------------------------------------------------------------------- */

CONVEYOR_API conveyor_status_t conveyor_outputs_count(conveyor_outputs_t outputs, int32_t* out);
/* The name of output `index` as the pipeline's `outputs:` list gives it (valid while the handle lives). */
CONVEYOR_API conveyor_status_t conveyor_outputs_name(conveyor_outputs_t outputs, int32_t index, const char** out);
/* The index of the output called `name` (CONVEYOR_ERROR_INVALID_ARGUMENT listing the names otherwise). */
CONVEYOR_API conveyor_status_t conveyor_outputs_index(conveyor_outputs_t outputs, const char* name, int32_t* out);
/* The iteration these outputs belong to (0, 1, ...). */
CONVEYOR_API conveyor_status_t conveyor_outputs_iteration(conveyor_outputs_t outputs, int64_t* out);
CONVEYOR_API conveyor_status_t conveyor_outputs_num_samples(conveyor_outputs_t outputs, int32_t index, int32_t* out);
/* 1 when every sample of output `index` has the same shape (conveyor_outputs_get with sample -1
 * works), else 0. */
CONVEYOR_API conveyor_status_t conveyor_outputs_is_uniform(conveyor_outputs_t outputs, int32_t index, int32_t* out);
/* A zero-copy tensor handle (release it with conveyor_tensor_release) of output `index`:
 * sample `sample` (0 <= sample < num_samples), or with sample -1 the whole batch as one tensor of
 * shape [num_samples, sample shape...] (uniform outputs only; its batch stride may exceed a
 * sample's size, since samples start 16-byte aligned; an empty batch has shape [0]).
 * GPU outputs are CONVEYOR_DEVICE_CUDA tensors whose ready event is the iteration's; host outputs
 * are CPU (or pinned) tensors. The handle holds the slot (see the lifetime rules above). */
CONVEYOR_API conveyor_status_t conveyor_outputs_get(conveyor_outputs_t outputs, int32_t index, int32_t sample,
                                                    conveyor_tensor_t* out);
/* Output `index` as one padded batch, for outputs whose samples differ in shape (boxes [N, 4] with
 * N per sample, N = 0 allowed; uniform outputs work too): *data receives a new contiguous tensor of
 * shape [num_samples, e1, e2, ...], each e the largest extent of that dimension over the samples,
 * holding sample i at [i, 0:its shape] and `pad_value` (converted to the dtype: integers must fit
 * it exactly when truncated toward zero) everywhere else; *lengths an int64 host tensor
 * [num_samples] of each sample's first extent (1 for 0-d samples); *shapes (may be NULL) an int64
 * host tensor [num_samples, ndim] of the samples' shapes. Host outputs are padded on the host (a GPU
 * node's pinned output is waited for first); GPU outputs into device memory on `stream` (required
 * then; an interop stream code), after the iteration's work, with the data's ready event recorded
 * there. The copies are new memory: they do not hold the slot. An empty batch gives data [0] and
 * lengths [0]. CONVEYOR_ERROR_INVALID_ARGUMENT when samples differ in rank or have 8 dimensions. */
CONVEYOR_API conveyor_status_t conveyor_outputs_get_padded(conveyor_outputs_t outputs, int32_t index, double pad_value,
                                                           int64_t stream, conveyor_tensor_t* data,
                                                           conveyor_tensor_t* lengths, conveyor_tensor_t* shapes);
/* Orders `stream` after the iteration's GPU work (an event wait, no host blocking), and the slot's
 * reuse after the work queued on `stream`; -1 blocks the host until the outputs are ready. */
CONVEYOR_API conveyor_status_t conveyor_outputs_wait(conveyor_outputs_t outputs, int64_t stream);
/* Drops this handle; the slot returns to the ring once no tensor or export taken from it remains. */
CONVEYOR_API void conveyor_outputs_release(conveyor_outputs_t outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CONVEYOR_CAPI_CONVEYOR_PIPELINE_H_ */
