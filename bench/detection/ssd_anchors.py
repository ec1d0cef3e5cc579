#!/usr/bin/env python3
"""SSD300's default boxes (Liu et al. 2016, as the MLPerf SSD reference and DALI's SSD example define
them), ltrb, normalized: the anchors both contenders pass to box_encoder.

Per feature map k (sizes 38, 19, 10, 5, 3, 1; steps 8, 16, 32, 64, 100, 300 px of a 300 px image;
scales s_k = 21, 45, 99, 153, 207, 261 and s_{k+1} up to 315 px):
  sizes: (s_k, s_k), (sqrt(s_k s_{k+1}), same), and for each aspect ratio a of the map
         (s_k sqrt(a), s_k / sqrt(a)) and its transpose, all / 300;
  centres: ((j + 0.5) / f_k, (i + 0.5) / f_k) with f_k = 300 / step_k, for every cell (i, j);
  every (cx, cy, w, h) clamped to [0, 1] (the reference clamps in that form), then turned into ltrb
  — so an anchor may reach outside [0, 1] but never has zero width or height.
4 boxes per cell on maps with one aspect ratio, 6 with two: 38²·4 + 19²·6 + 10²·6 + 5²·6 + 3²·4 + 1²·4
= 8732. The order (sizes outer, cells inner, per map) is the reference's; box_encoder does not care.

    ssd_anchors.py            # prints the count and the first anchors (a check)
    ssd_anchors.py --flow     # one YAML flow list of the 4 x 8732 values
"""
import math
import sys

FIG_SIZE = 300
FEATURE_MAPS = (38, 19, 10, 5, 3, 1)
STEPS = (8, 16, 32, 64, 100, 300)
SCALES = (21, 45, 99, 153, 207, 261, 315)
ASPECT_RATIOS = ((2,), (2, 3), (2, 3), (2, 3), (2,), (2,))
EXPECTED = 8732


def _clamp(v):
    return min(max(v, 0.0), 1.0)


def anchors_xywh():
    """[(cx, cy, w, h)], clamped to [0, 1], in the reference's order."""
    out = []
    for k, size in enumerate(FEATURE_MAPS):
        f_k = FIG_SIZE / STEPS[k]
        s1 = SCALES[k] / FIG_SIZE
        s2 = SCALES[k + 1] / FIG_SIZE
        mid = math.sqrt(s1 * s2)
        sizes = [(s1, s1), (mid, mid)]
        for a in ASPECT_RATIOS[k]:
            w, h = s1 * math.sqrt(a), s1 / math.sqrt(a)
            sizes += [(w, h), (h, w)]
        for w, h in sizes:
            for i in range(size):
                for j in range(size):
                    out.append(tuple(_clamp(v) for v in ((j + 0.5) / f_k, (i + 0.5) / f_k, w, h)))
    return out


def anchors_ltrb():
    """[(l, t, r, b)] of anchors_xywh(); raises when the count or a box is not what SSD300 has."""
    out = [(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2) for cx, cy, w, h in anchors_xywh()]
    if len(out) != EXPECTED:
        raise ValueError("SSD300 has %d default boxes, generated %d" % (EXPECTED, len(out)))
    bad = [a for a in out if not (a[2] > a[0] and a[3] > a[1])]
    if bad:
        raise ValueError("anchors without width or height: %s" % bad[:3])
    return out


def flow_list(anchors, per_line=8):
    """A YAML flow list, `per_line` anchors a line (repr: shortest exact float text)."""
    rows = []
    for i in range(0, len(anchors), per_line):
        rows.append(", ".join(repr(round(v, 7)) for a in anchors[i:i + per_line] for v in a))
    return "[\n" + ",\n".join("          " + r for r in rows) + "\n        ]"


def main():
    anchors = anchors_ltrb()
    if "--flow" in sys.argv[1:]:
        print(flow_list(anchors))
        return 0
    print("%d anchors (SSD300), first %s, last %s" % (len(anchors), anchors[0], anchors[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
