"""Outputs whose samples differ in shape (boxes [N, 4] with N per sample): how they are handed out.

Modes, per output:
  "list"  a list of per-sample tensors (zero-copy views of the pipeline's slot)
  "pad"   Padded(data, lengths): one new tensor [batch, max extents...] holding sample i at
          [i, :its shape] and pad_value elsewhere, on the output's device, plus int64 host lengths
          [batch] (each sample's first extent); .shapes is the int64 [batch, ndim] of full shapes
  None    refuse (the torch Loader's default, as DALI's iterators): a ValueError names the output
          and its shapes
An option is one mode for every output, a dict {output name: mode} (others: the default), or a
sequence of modes in output order; pad_value likewise (a number, a dict or a sequence).
"""

MODES = ("list", "pad", None)


class Padded(tuple):
    """(data, lengths) of a padded output; `shapes` the samples' full shapes. Unpacks as a pair:
    `boxes, counts = batch["bboxes"]`."""

    def __new__(cls, data, lengths, shapes=None):
        self = tuple.__new__(cls, (data, lengths))
        self.shapes = shapes
        return self

    @property
    def data(self):
        return self[0]

    @property
    def lengths(self):
        return self[1]

    def map(self, fn):
        """The same with fn applied to data, lengths and shapes (conversion, slicing)."""
        return Padded(fn(self[0]), fn(self[1]), None if self.shapes is None else fn(self.shapes))

    def __repr__(self):
        return "Padded(data=%r, lengths=%r)" % (self[0], self[1])


def _pick(option, names, what, default, check):
    """Per output (in `names` order) the value `option` gives it."""
    if isinstance(option, dict):
        unknown = [k for k in option if k not in names]
        if unknown:
            raise ValueError("%s: names %s, which %s no output of (outputs: %s)" %
                             (what, ", ".join(repr(k) for k in unknown), "is" if len(unknown) == 1 else "are",
                              ", ".join(names)))
        values = [option.get(n, default) for n in names]
    elif isinstance(option, (list, tuple)):
        if len(option) != len(names):
            raise ValueError("%s: expected one entry per output (%d: %s), got %d" %
                             (what, len(names), ", ".join(names), len(option)))
        values = list(option)
    else:
        values = [option] * len(names)
    for v in values:
        check(v)
    return values


def _check_mode(what):
    def check(mode):
        if mode not in MODES:
            raise ValueError("%s: expected \"list\", \"pad\" or None for an output, got %r" % (what, mode))
    return check


def _check_number(what):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("%s: expected a number for an output, got %r" % (what, value))
    return check


def modes(option, names, what="ragged", default="list"):
    return _pick(option, names, what, default, _check_mode(what))


def pad_values(option, names, what="pad_value"):
    return [float(v) for v in _pick(option, names, what, 0, _check_number(what))]


def shape_summary(samples, limit=4):
    """"(3, 4), (0, 4), (1, 4), ..." for an error message."""
    shapes = [str(tuple(getattr(s, "shape", ()))) for s in samples[:limit]]
    return ", ".join(shapes) + (", ..." if len(samples) > limit else "")
