"""conveyor.Pipeline: a YAML pipeline over the C API, iterable as dicts of output tensors.

    pipe = conveyor.Pipeline("pipelines/random_augment.yaml")
    for batch in itertools.islice(pipe, 100):       # builds on first use; endless otherwise
        x = torch.from_dlpack(batch["quantized"])   # zero-copy, ordered on torch's current stream

Outputs are zero-copy views of the pipeline's prefetch slot: a slot is rewritten only after every
tensor (and every DLPack export) taken from it is gone, and after the work queued on the streams
the consumers named when they imported it. So with prefetch_depth D at most D batches can be held
at once; a loop that keeps only its current batch needs D >= 2 (the previous batch is still bound
to the loop variable while the next one is fetched). Copy what you keep longer.
"""
import ctypes
import os

from . import _lib
from . import _ragged
from . import functions
from ._lib import check, lib
from ._ragged import Padded  # noqa: F401 (conveyor.Padded)
from ._tensor import Tensor, as_tensor, default_stream

ConfigError = _lib.ConfigError
PluginError = _lib.PluginError


def _looks_like_path(source):
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str):
        raise TypeError("Pipeline: expected a file path or YAML text (str or os.PathLike), got %s" %
                        type(source).__name__)
    if "\n" in source:
        return False
    # One line: a file when it exists or is named like one (so a missing file says so rather than
    # failing to parse its name as YAML).
    return os.path.exists(source) or source.strip().endswith((".yaml", ".yml"))


class Pipeline:
    """A Conveyor pipeline: `source` is a YAML file path or YAML text (`base_dir` resolves relative
    paths in text; default: the current directory).

    build() / run() / feed(name, data) / outputs() mirror the C API; iterating builds on first use
    and yields outputs() then schedules the next iteration with run(), forever. Pipelines with
    external_source nodes are driven by hand: feed every source, run(), outputs().

    `checkpoint`: bytes from checkpoint() of an earlier run of the same pipeline (same graph, seed,
    shard, dataset): this one continues with the first batch that run had not handed out
    (docs/distributed.md). One of another pipeline is refused at build, saying what differs.
    """

    def __init__(self, source, *, base_dir=None, checkpoint=None):
        self._ptr = None
        handle = ctypes.c_void_p()
        if _looks_like_path(source):
            check(lib.conveyor_pipeline_create_from_file(os.fsencode(source), ctypes.byref(handle)))
        else:
            base = None if base_dir is None else os.fsencode(base_dir)
            check(lib.conveyor_pipeline_create_from_string(source.encode("utf-8"), base, ctypes.byref(handle)))
        self._ptr = handle
        self._built = False
        count = ctypes.c_int32()
        check(lib.conveyor_pipeline_external_source_count(self._ptr, ctypes.byref(count)))
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            check(lib.conveyor_pipeline_external_source_name(self._ptr, i, ctypes.byref(name)))
            names.append(name.value.decode())
        self.external_sources = tuple(names)
        if checkpoint is not None:
            if isinstance(checkpoint, str):
                checkpoint = checkpoint.encode("utf-8")
            state = bytes(checkpoint)
            check(lib.conveyor_pipeline_resume_from(self._ptr, state, len(state)))

    @classmethod
    def from_yaml(cls, text, base_dir=None):
        """From YAML text, even a one-line text that looks like a file name."""
        if "\n" not in text:
            text += "\n"
        return cls(text, base_dir=base_dir)

    # ---- lifetime ------------------------------------------------------------------------------
    def close(self):
        """Stops and frees the pipeline (never hangs). Tensors taken from it stay valid."""
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and lib is not None:
            lib.conveyor_pipeline_destroy(ptr)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._ptr:
            raise _lib.InvalidArgumentError("Pipeline: expected an open pipeline, got one that was closed")
        return self._ptr

    # ---- running -------------------------------------------------------------------------------
    def build(self):
        """Builds the graph and schedules the first prefetch_depth iterations (with external
        sources: as many as were fed)."""
        functions._track(self)  # closed at exit if it may call Python functions
        check(lib.conveyor_pipeline_build(self._handle()))
        self._built = True
        return self

    def run(self):
        """Schedules one more iteration."""
        check(lib.conveyor_pipeline_run(self._handle()))

    def epoch_size(self, reader):
        """Samples one epoch of reader node `reader` delivers (its shard; padded to whole batches
        with pad_last_batch). Needs build()."""
        out = ctypes.c_int64()
        check(lib.conveyor_pipeline_epoch_size(self._handle(), reader.encode(), ctypes.byref(out)))
        return out.value

    def checkpoint(self):
        """The state (bytes, a few hundred) from which Pipeline(..., checkpoint=state) reproduces
        the batches from the first one not yet returned by outputs() / iteration on, bit for bit.
        Prefetched iterations are accounted for; taking it does not wait for the pipeline. Needs
        build()."""
        size = ctypes.c_size_t()
        check(lib.conveyor_pipeline_checkpoint(self._handle(), None, 0, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(size.value + 1)
        check(lib.conveyor_pipeline_checkpoint(self._handle(), buf, size.value + 1, ctypes.byref(size)))
        return buf.raw[:size.value]

    def stage_times(self):
        """Where the pipeline's stage thread spent its time so far: a dict of "iterations" (stages
        finished) and seconds, summed over them, in "cpu_stage", "gpu_issue", "gpu_wait" (waiting
        for a slot's previous GPU work: the GPU is the bottleneck) and "idle" (waiting for the
        consumer). Subtract two readings for a span without warm-up. Needs build()."""
        iterations = ctypes.c_int64()
        ns = (ctypes.c_int64 * 4)()
        check(lib.conveyor_pipeline_stage_times(self._handle(), ctypes.byref(iterations), ns))
        out = {"iterations": iterations.value}
        for key, value in zip(("cpu_stage", "gpu_issue", "gpu_wait", "idle"), ns):
            out[key] = value / 1e9
        return out

    def skipped_files(self):
        """Files dropped instead of failing (decoders with on_error: skip), in the order first met:
        a list of (node, file, times, reason) tuples; times counts each epoch that met the file.
        Counted when the pipeline reads ahead, up to prefetch_depth iterations before outputs().
        Needs build()."""
        size = ctypes.c_size_t()
        check(lib.conveyor_pipeline_skipped(self._handle(), None, None, 0, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(size.value + 1)
        check(lib.conveyor_pipeline_skipped(self._handle(), None, buf, size.value + 1, ctypes.byref(size)))
        rows = []
        for line in buf.raw[:size.value].decode("utf-8", "replace").splitlines():
            node, file, times, reason = line.split("\t", 3)
            rows.append((node, file, int(times), reason))
        return rows

    def feed(self, name, data, stream=None):
        """Queues one iteration's batch for the external_source node `name`.

        `data`: one array-like whose first dimension is the batch, or a list/tuple of per-sample
        array-likes (shapes may differ) — anything conveyor.as_tensor accepts (NumPy, PyTorch, CuPy,
        JAX, Numba, conveyor.Tensor). `stream`: where the producer should make device data ready
        (default: Conveyor's stream on that device). The data is used without copying where its
        layout allows, and kept alive as long as the pipeline needs it.
        """
        encoded = str(name).encode("utf-8")
        if isinstance(data, (list, tuple)):
            tensors = [as_tensor(x, stream) for x in data]
            array = (ctypes.c_void_p * max(len(tensors), 1))(*[t._ptr for t in tensors])
            check(lib.conveyor_pipeline_feed_samples(self._handle(), encoded, array, len(tensors)))
        else:
            tensor = as_tensor(data, stream)
            check(lib.conveyor_pipeline_feed_batch(self._handle(), encoded, tensor._ptr))

    def outputs(self, samples=False, ragged="list", pad_value=0):
        """The next iteration's outputs as a dict name -> conveyor.Tensor of the whole batch (shape
        [batch, ...]) when its samples share one shape, else as `ragged` says for that output
        (docs/python.md, "Outputs of varying shape"): "list" (default) a list of per-sample tensors,
        "pad" a conveyor.Padded(data, lengths) with `pad_value` where a sample is smaller (padded
        even when this batch happens to be uniform); a dict {name: mode} or a sequence in output order
        sets it per output. samples=True: lists for every output not padded. Blocks until the
        iteration is computed."""
        handle = ctypes.c_void_p()
        check(lib.conveyor_pipeline_outputs(self._handle(), ctypes.byref(handle)))
        try:
            count = ctypes.c_int32()
            check(lib.conveyor_outputs_count(handle, ctypes.byref(count)))
            names = []
            for i in range(count.value):
                name = ctypes.c_char_p()
                check(lib.conveyor_outputs_name(handle, i, ctypes.byref(name)))
                names.append(name.value.decode())
            modes = _ragged.modes(ragged, names)
            pads = _ragged.pad_values(pad_value, names)
            result = {}
            for i, name in enumerate(names):
                if modes[i] == "pad":
                    result[name] = self._padded(handle, i, pads[i])
                    continue
                uniform = ctypes.c_int32()
                check(lib.conveyor_outputs_is_uniform(handle, i, ctypes.byref(uniform)))
                if uniform.value and not samples:
                    result[name] = self._get(handle, i, -1)
                else:
                    result[name] = self._samples(handle, i)
            return result
        finally:
            # The tensors hold the slot from here on; the handle is not needed any more.
            lib.conveyor_outputs_release(handle)

    def _samples(self, handle, index):
        n = ctypes.c_int32()
        check(lib.conveyor_outputs_num_samples(handle, index, ctypes.byref(n)))
        return [self._get(handle, index, s) for s in range(n.value)]

    def _padded(self, handle, index, pad_value):
        # GPU outputs are padded on Conveyor's stream of their device; consumers wait on it (DLPack).
        stream = -1
        n = ctypes.c_int32()
        check(lib.conveyor_outputs_num_samples(handle, index, ctypes.byref(n)))
        if n.value > 0:
            device_type, device_id = self._get(handle, index, 0).device
            if device_type == _lib.DEVICE_CUDA:
                stream = default_stream(device_id).handle
        data, lengths, shapes = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.conveyor_outputs_get_padded(handle, index, pad_value, stream, ctypes.byref(data),
                                              ctypes.byref(lengths), ctypes.byref(shapes)))
        return Padded(Tensor(data), Tensor(lengths), Tensor(shapes))

    @staticmethod
    def _get(handle, index, sample):
        out = ctypes.c_void_p()
        check(lib.conveyor_outputs_get(handle, index, sample, ctypes.byref(out)))
        return Tensor(out)

    # ---- iteration -----------------------------------------------------------------------------
    def __iter__(self):
        if self.external_sources:
            raise TypeError("Pipeline: cannot iterate a pipeline with external_source nodes (%s): feed each "
                            "of them, then run() and outputs(), once per iteration" %
                            ", ".join(self.external_sources))
        if not self._built:
            self.build()
        return self

    def __next__(self):
        return self.next_batch()

    def next_batch(self, ragged="list", pad_value=0):
        """One iteration as iteration yields it (outputs(), then run()), with outputs(ragged=,
        pad_value=)'s options (None counts as "list" here); the torch Loader calls it."""
        chosen = list(ragged.values()) if isinstance(ragged, dict) else ragged
        if "pad" not in (chosen if isinstance(chosen, (list, tuple)) else [chosen]):  # lists (or None: the Loader's refusal) need no padding
            return self._next_fast()
        batch = self.outputs(ragged=ragged, pad_value=pad_value)
        self.run()
        if getattr(self, "_names", None) is None:
            self._set_names(batch)
        return batch

    def _set_names(self, batch):
        self._names = list(batch)
        n = len(self._names)
        self._next_args = ((ctypes.c_void_p * n)(), (_lib.TensorInfo * n)(), ctypes.c_int32(), ctypes.c_void_p())

    def _next_fast(self):
        # One C call per batch (conveyor_pipeline_next: outputs, the batch tensors and their info,
        # run); the output names come from the first batch, which takes the general path.
        names = getattr(self, "_names", None)
        if names is None:
            batch = self.outputs()
            self.run()
            self._set_names(batch)
            return batch
        tensors, infos, count, handle = self._next_args
        check(lib.conveyor_pipeline_next(self._handle(), len(names), tensors, infos, ctypes.byref(count),
                                         ctypes.byref(handle)))
        batch = {}  # in output order (the torch Loader's output_map is positional)
        try:
            for i, name in enumerate(names):
                if tensors[i]:
                    batch[name] = Tensor._adopt(tensors[i], _lib.TensorInfo.from_buffer_copy(infos[i]))
                    tensors[i] = None
                else:
                    # This output's samples differ in shape: per-sample tensors, as outputs() gives them.
                    n = ctypes.c_int32()
                    check(lib.conveyor_outputs_num_samples(handle, i, ctypes.byref(n)))
                    batch[name] = [self._get(handle, i, s) for s in range(n.value)]
        finally:
            for i in range(len(names)):  # handles not adopted because of an error above
                if tensors[i]:
                    lib.conveyor_tensor_release(tensors[i])
                    tensors[i] = None
            if handle:
                lib.conveyor_outputs_release(handle)
                handle.value = None
        return batch
