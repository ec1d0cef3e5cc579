#!/usr/bin/env python3
"""Checks one batch that `conveyor run --save-outputs DIR` wrote from detection_full.yaml, with the
standard library only (no numpy here): the benchmark's test that Conveyor encodes against all of
SSD300's anchors and that what it times is right.

    check_outputs.py DIR [--iteration 0] [--categories 80]

- images_out [B, 3, 300, 300] float16; encoded [B, 8732, 4] float32; encoded_labels [B, 8732] int32;
- labels in [0, categories]; encoded values finite; background anchors (label 0) encode themselves,
  which with means 0 is [0, 0, 0, 0];
- every matched anchor's offsets, decoded with its anchor (stds [0.1, 0.1, 0.2, 0.2], ssd_anchors.py),
  give back one of the sample's boxes (the `boxes` output, clipped to [0, 1]) within 1e-3, and at
  least one anchor of the batch is matched.
Exit 1 with the first failure named; prints one summary line otherwise.
"""
import argparse
import array
import ast
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ssd_anchors  # noqa: E402

STDS = (0.1, 0.1, 0.2, 0.2)
TYPECODES = {"<f4": "f", "<i4": "i"}


def load_npy(path, want_data=True):
    """(descr, shape, flat array.array or None) of a version 1/2 .npy file in C order."""
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise SystemExit("%s: not a .npy file" % path)
        major = f.read(2)[0]
        size = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(size).decode("latin1"))
        if header.get("fortran_order"):
            raise SystemExit("%s: expected C order" % path)
        shape, descr = tuple(header["shape"]), header["descr"]
        if not want_data:
            return descr, shape, None
        if descr not in TYPECODES:
            raise SystemExit("%s: expected float32 or int32 data, got %s" % (path, descr))
        data = array.array(TYPECODES[descr])
        data.frombytes(f.read())
        return descr, shape, data


def sample_boxes(folder, iteration, sample, batch):
    """The `boxes` output of one sample: per-sample files when the batch was not uniform."""
    own = os.path.join(folder, "boxes_%06d_%04d.npy" % (iteration, sample))
    if os.path.exists(own):
        _, shape, data = load_npy(own)
        return [tuple(data[4 * i:4 * i + 4]) for i in range(shape[0])]
    _, shape, data = load_npy(os.path.join(folder, "boxes_%06d.npy" % iteration))
    per = shape[1] * 4
    return [tuple(data[sample * per + 4 * i:sample * per + 4 * i + 4]) for i in range(shape[1])]


def decode(offsets, anchor):
    l, t, r, b = anchor
    aw, ah = r - l, b - t
    cx, cy = offsets[0] * STDS[0] * aw + (l + r) / 2, offsets[1] * STDS[1] * ah + (t + b) / 2
    w, h = math.exp(offsets[2] * STDS[2]) * aw, math.exp(offsets[3] * STDS[3]) * ah
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def fail(message):
    print("check_outputs: FAIL: " + message)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--iteration", type=int, default=0)
    ap.add_argument("--categories", type=int, default=80)
    args = ap.parse_args()
    it = args.iteration
    at = lambda name: os.path.join(args.folder, "%s_%06d.npy" % (name, it))  # noqa: E731
    anchors = ssd_anchors.anchors_ltrb()
    n = len(anchors)
    descr, ishape, _ = load_npy(at("images_out"), want_data=False)
    batch = ishape[0]
    if descr != "<f2" or ishape[1:] != (3, 300, 300):
        fail("images_out: expected float16 [B, 3, 300, 300], got %s %s" % (descr, list(ishape)))
    descr, eshape, enc = load_npy(at("encoded"))
    if descr != "<f4" or eshape != (batch, n, 4):
        fail("encoded: expected float32 [%d, %d, 4], got %s %s" % (batch, n, descr, list(eshape)))
    descr, lshape, lab = load_npy(at("encoded_labels"))
    if descr != "<i4" or lshape != (batch, n):
        fail("encoded_labels: expected int32 [%d, %d], got %s %s" % (batch, n, descr, list(lshape)))
    matched = 0
    for s in range(batch):
        boxes = [tuple(min(max(v, 0.0), 1.0) for v in box) for box in sample_boxes(args.folder, it, s, batch)]
        for a in range(n):
            label = lab[s * n + a]
            offsets = enc[(s * n + a) * 4:(s * n + a) * 4 + 4]
            if not all(math.isfinite(v) for v in offsets):
                fail("sample %d anchor %d: offsets not finite: %s" % (s, a, list(offsets)))
            if not 0 <= label <= args.categories:
                fail("sample %d anchor %d: label %d outside [0, %d]" % (s, a, label, args.categories))
            if label == 0:
                if any(abs(v) > 1e-6 for v in offsets):
                    fail("sample %d anchor %d: a background anchor encodes %s, expected zeros" % (s, a, list(offsets)))
                continue
            matched += 1
            box = decode(offsets, anchors[a])
            if not any(all(abs(x - y) < 1e-3 for x, y in zip(box, b)) for b in boxes):
                fail("sample %d anchor %d (label %d): decodes to %s, which is none of the sample's %d boxes"
                     % (s, a, label, [round(v, 4) for v in box], len(boxes)))
    if matched == 0:
        fail("no anchor of the batch is matched")
    print("check_outputs: ok: batch %d, encoded [%d, %d, 4], %d matched anchors (%.1f per sample), every one "
          "decoding to a box of its sample" % (batch, batch, n, matched, matched / batch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
