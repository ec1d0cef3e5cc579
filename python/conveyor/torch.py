"""conveyor.torch.Loader: Conveyor pipelines in PyTorch training loops, with the conventions of DALI's
DALIGenericIterator (output_map, reader_name, size, last_batch_policy, auto_reset, len()).

    from conveyor.torch import Loader
    loader = Loader(pipe, output_map=["images", "labels"], reader_name="reader", last_batch_policy="partial")
    for epoch in range(epochs):
        for data in loader:                        # len(loader) batches, then StopIteration
            images, labels = data[0]["images"], data[0]["labels"]   # torch.Tensor, pipeline's device

Yields what DALI yields: a list with one dict per pipeline, {output_map[i]: the pipeline's i-th output}.
A value is one torch.Tensor of shape [batch, ...]. An output whose samples differ in shape (boxes
[N, 4], N per sample) is refused with a ValueError, as DALI's iterators refuse it, unless `ragged`
says otherwise for it: "list" yields a list of per-sample tensors, "pad" a conveyor.Padded(data,
lengths) — data [batch, max N, 4] with pad_value where a sample has fewer rows, lengths int64 [batch]
on the CPU — every batch, uniform or not (docs/python.md, "Outputs of varying shape"). Tensors are zero-copy views of the pipeline's prefetch slot made with
torch.from_dlpack, which hands torch's current CUDA stream to the bridge: the slot's ready event is
waited on by that stream (no host synchronisation). The slot is reused once every tensor of it is
gone, so a loop that keeps only its current batch needs prefetch_depth >= 2; copy what you keep.
Importing this module does not import torch; constructing a Loader does (unless to_tensor is given).

Epochs. Let E be the samples per epoch (Pipeline.epoch_size(reader_name), or `size` alone) and B the
batch size; epoch k of the loader is the samples [k*E, k*E + R) of the pipeline's sample stream, R
the real samples per epoch (E, or `size` when given with reader_name). Batch b of the pipeline holds
stream samples [b*B, (b+1)*B).

| last_batch_policy | epoch k yields                                          | len()                   |
|-------------------|---------------------------------------------------------|-------------------------|
| "fill"            | the full batches that start inside [kE, kE+R)           | ceil(R/B) when E % B == 0 |
| "partial"         | the batches that meet [kE, kE+R), trimmed to it          | ceil(R/B) when E % B == 0 |
| "drop"            | the batches that lie entirely inside [kE, kE+R)          | floor(R/B) when E % B == 0 |

len() is exact for the current epoch (or the next one, between epochs), for every E and B.
- A reader with pad_last_batch: true reports E padded to whole batches and never mixes epochs: every
  policy then yields E/B batches whose last one ends with copies of the shard's last sample; give
  `size` = the shard's real sample count too and "partial" trims them off, "drop" drops that batch.
- Without pad_last_batch the reader's stream runs on: "fill" completes the last batch with the next
  epoch's first samples, which then belong to this epoch (DALI's behaviour); "partial" yields the
  batch that straddles the boundary twice — its head ends epoch k and its tail starts epoch k+1 —
  so every epoch holds every sample exactly once (DALI drops the tail); "drop" skips it.
- Rotating shards (num_shards > 1 without stick_to_shard or padding) may differ by one sample
  between epochs; E is shard_id's size, so use pad_last_batch for exact multi-rank epochs.
- Without reader_name and size (-1) there are no epochs: the loader runs forever and has no len().
- A batch that no epoch yields ("drop" without padding, or pure padding when `size` < E) is still
  fetched, and takes a prefetch slot: a loop that still references the previous batch then needs
  prefetch_depth >= 3 (the error says so).

At the end of an epoch __next__ raises StopIteration; with auto_reset the next iter() starts the
next epoch, else reset() must be called first (DALI).
"""
import warnings

from . import _lib
from . import _ragged
from ._ragged import Padded
from ._tensor import HostView

POLICIES = ("fill", "drop", "partial")


class EpochPlan:
    """The pipeline batches that epoch `epoch` yields and how each is trimmed (pure arithmetic)."""

    __slots__ = ("first", "stop", "lo", "hi", "batch_size", "trims")

    def __init__(self, epoch, epoch_size, real_size, batch_size, policy):
        lo = epoch * epoch_size
        hi = lo + real_size
        b = batch_size
        if policy == "fill":
            first, stop = -(-lo // b), -(-hi // b)
        elif policy == "partial":
            first, stop = lo // b, -(-hi // b)
        else:  # drop
            first, stop = -(-lo // b), hi // b
        self.first, self.stop = first, max(stop, first)
        self.lo, self.hi, self.batch_size = lo, hi, b
        self.trims = policy == "partial"  # "fill" and "drop" yield whole batches

    def __len__(self):
        return self.stop - self.first

    def trim(self, batch):
        """(begin, end) of the samples of pipeline batch `batch` to yield, or None for all of them."""
        if not self.trims:
            return None
        start = batch * self.batch_size
        begin = max(self.lo - start, 0)
        end = min(self.hi - start, self.batch_size)
        return None if begin == 0 and end == self.batch_size else (begin, end)


class _Source:
    """One pipeline's stream of batches: fetched in order, the last one kept (a straddling batch is
    yielded twice under "partial"), converted to the consumer's tensors only when yielded."""

    def __init__(self, pipeline, output_map, to_tensor, modes, pads):
        self.pipeline = iter(pipeline)  # builds on first use
        self.output_map = output_map
        self.to_tensor = to_tensor
        self.modes, self.pads = modes, pads  # per output, in output order
        self.index = -1      # pipeline batch index of `raw`
        self.raw = None      # its outputs (conveyor.Tensor or lists of them), in output order
        self.converted = None

    def advance(self):
        self.raw = self.converted = None  # drop our hold on the slot before taking the next one
        next_batch = getattr(self.pipeline, "next_batch", None)  # conveyor.Pipeline (tests feed others)
        outputs = next_batch(self.modes, self.pads) if next_batch else next(self.pipeline)
        self.index += 1
        if len(outputs) != len(self.output_map):
            raise ValueError("Loader: output_map names %d outputs (%s), but the pipeline has %d (%s)" %
                             (len(self.output_map), ", ".join(self.output_map), len(outputs), ", ".join(outputs)))
        raw = list(outputs.values())
        for name, mode, value in zip(self.output_map, self.modes, raw):
            if mode is None and isinstance(value, list):
                raise ValueError(
                    "Loader: output %r has samples of different shapes in pipeline batch %d (%s); DALI's iterators "
                    "refuse this too: pass ragged={%r: \"pad\"} for a padded tensor and lengths (pad_value=...), "
                    "ragged={%r: \"list\"} for a list of per-sample tensors, or pad it in the pipeline" %
                    (name, self.index, _ragged.shape_summary(value), name, name))
        self.raw = raw

    def batch_size(self):
        if self.raw is None:
            self.advance()
        first = self.raw[0]
        if isinstance(first, Padded):
            return first.data.shape[0]
        return len(first) if isinstance(first, list) else first.shape[0]

    def get(self, batch, trim):
        skipped = 0
        while self.index < batch:
            try:
                self.advance()
            except _lib.InvalidArgumentError as e:
                if not skipped or "still held" not in str(e):
                    raise
                raise _lib.InvalidArgumentError(
                    "Loader: batch %d follows %d batch(es) that last_batch_policy skips, which take prefetch "
                    "slots too: with the previous batch still referenced, use prefetch_depth >= 3 (or drop the "
                    "reference); %s" % (batch, skipped, e)) from None
            skipped += 1
        if self.converted is None:
            self.converted = [_convert(v, self.to_tensor) for v in self.raw]
        values = self.converted if trim is None else [_cut(v, trim[0], trim[1]) for v in self.converted]
        return dict(zip(self.output_map, values))


def _convert(value, convert):
    if isinstance(value, Padded):
        return value.map(convert)
    return [convert(t) for t in value] if isinstance(value, list) else convert(value)


def _cut(value, begin, end):
    if isinstance(value, Padded):
        return value.map(lambda t: t[begin:end])
    return value[begin:end]


def _torch_from_dlpack(torch):
    """torch.from_dlpack, with pinned outputs (kDLCUDAHost, which torch refuses) taken as the CPU
    memory they are (docs/interop.md)."""
    def convert(t):
        return torch.from_dlpack(HostView(t) if t.device[0] == _lib.DEVICE_CUDA_HOST else t)
    return convert


class Loader:
    """An iterable over a Conveyor pipeline (or a list of them) for PyTorch training loops; see the
    module's documentation for the epoch rules. `to_tensor` turns a conveyor.Tensor into the tensor
    that is yielded (default torch.from_dlpack; numpy.from_dlpack works for CPU pipelines).

    `ragged`: what an output whose samples differ in shape becomes — None (default: a ValueError,
    as DALI), "list" or "pad"; one mode for all outputs or a dict {output_map name: mode}.
    `pad_value`: the fill of "pad" (a number, or a dict per name; default 0)."""

    def __init__(self, pipelines, output_map, reader_name=None, size=-1, last_batch_policy="fill",
                 auto_reset=True, to_tensor=None, ragged=None, pad_value=0):
        if last_batch_policy not in POLICIES:
            raise ValueError("Loader: last_batch_policy must be one of %s, got %r" %
                             (", ".join(repr(p) for p in POLICIES), last_batch_policy))
        output_map = list(output_map)
        if not output_map or len(set(output_map)) != len(output_map):
            raise ValueError("Loader: output_map must name each pipeline output once, got %r" % (output_map,))
        modes = _ragged.modes(ragged, output_map, "Loader: ragged", default=None)
        pads = _ragged.pad_values(pad_value, output_map, "Loader: pad_value")
        if to_tensor is None:
            import torch  # the only place torch is imported
            to_tensor = _torch_from_dlpack(torch)
        pipelines = list(pipelines) if isinstance(pipelines, (list, tuple)) else [pipelines]
        if not pipelines:
            raise ValueError("Loader: expected a conveyor.Pipeline or a non-empty list of them, got none")
        self._sources = [_Source(p, output_map, to_tensor, modes, pads) for p in pipelines]
        self._policy = last_batch_policy
        self._auto_reset = auto_reset
        self._sizes = [self._epoch_sizes(p, reader_name, size) for p in pipelines]
        self._epoch = 0
        self._position = 0   # batches of the current epoch already yielded
        self._plans = None   # per source, for self._epoch (made on first use: needs the batch size)
        self._ended = False  # the current epoch raised StopIteration and was not reset yet

    @staticmethod
    def _epoch_sizes(pipeline, reader_name, size):
        """(E, R): the stream samples per epoch and the real ones among them; None without epochs."""
        size = int(size)
        if reader_name is None:
            return None if size < 0 else (size, size)
        iter(pipeline)  # epoch_size needs a built pipeline
        epoch = pipeline.epoch_size(reader_name)
        if size < 0:
            return epoch, epoch
        if size > epoch:
            raise ValueError("Loader: size (the real samples per epoch) must be at most the epoch size %d that "
                             "reader %r reports, got %d" % (epoch, reader_name, size))
        return epoch, size

    # ---- epochs ----------------------------------------------------------------------------------
    def _current_plans(self):
        if self._plans is None and self._sizes[0] is not None:
            plans = [EpochPlan(self._epoch, e, r, s.batch_size(), self._policy)
                     for s, (e, r) in zip(self._sources, self._sizes)]
            if len({len(p) for p in plans}) > 1:
                raise ValueError("Loader: the pipelines yield different numbers of batches in epoch %d (%s); "
                                 "give them equal shards" % (self._epoch, ", ".join(str(len(p)) for p in plans)))
            self._plans = plans
        return self._plans

    def __len__(self):
        plans = self._current_plans()
        if plans is None:
            raise TypeError("Loader: no epochs, so no len(): give reader_name or size")
        return len(plans[0])

    @property
    def epoch(self):
        """The epoch being yielded (or the next one, between epochs), from 0."""
        return self._epoch

    def reset(self):
        """Starts the next epoch after the current one ended (auto_reset does this by itself)."""
        if not self._ended:
            warnings.warn("Loader.reset(): the current epoch has not ended; ignored (DALI does the same)")
            return
        self._epoch += 1
        self._position = 0
        self._plans = None
        self._ended = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._ended:
            raise StopIteration
        plans = self._current_plans()
        if plans is None:  # no epochs
            return [s.get(s.index + 1, None) for s in self._sources]
        if self._position >= len(plans[0]):
            self._ended = True
            if self._auto_reset:
                self.reset()
            raise StopIteration
        out = []
        for source, plan in zip(self._sources, plans):
            batch = plan.first + self._position
            out.append(source.get(batch, plan.trim(batch)))
        self._position += 1
        return out

    next = __next__  # DALI's iterators have it
