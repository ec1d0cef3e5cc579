#!/usr/bin/env python3
"""Writes the benchmark's pipeline files from bench/pipelines/detection_bench.yaml: the box_encoder's
one-anchor placeholder line replaced by SSD300's 8732 default boxes (ssd_anchors.py), and the
variants that leave nodes out, for the rows that show where Conveyor's time goes.

    make_pipeline.py OUT_DIR [--template bench/pipelines/detection_bench.yaml]

| file (in OUT_DIR)              | nodes                                                     | outputs                 |
|--------------------------------|-----------------------------------------------------------|-------------------------|
| detection_full.yaml            | all (the headline row)                                    | images_out, encoded, encoded_labels, boxes, labels |
| detection_no_encoder.yaml      | all but box_encoder                                       | images_out, boxes, labels |
| detection_decode_only.yaml     | readers.coco and decoders.image                           | images                  |

The template is cut into node blocks at its `  - op:` lines (it is written that way; a block that
does not start so fails here, naming the line); the variants drop blocks by node name and rewrite
the `outputs:` line. Prints one line per file, with the anchor count it wrote.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ssd_anchors  # noqa: E402

TEMPLATE = os.path.join(os.path.dirname(HERE), "pipelines", "detection_bench.yaml")
ANCHORS_LINE = re.compile(r"^(\s*)anchors: \[[^\]]*\]\s*# SSD300_ANCHORS.*$", re.M)
VARIANTS = {
    "detection_full.yaml": ((), None),
    "detection_no_encoder.yaml": (("encoder",), "[images_out, boxes, labels]"),
    "detection_decode_only.yaml": (("bbox_crop", "crop", "resize", "flip", "flip_boxes", "normalize", "encoder"),
                                   "[images]"),
}


def split(text):
    """(text up to and with the `ops:` line, [(node name, block text)], the top-level outputs list)."""
    head, ops_line, rest = text.partition("\nops:\n")
    if not ops_line:
        sys.exit("make_pipeline.py: the template has no 'ops:' line")
    body, sep, outputs = rest.rpartition("\noutputs:")
    if not sep:
        sys.exit("make_pipeline.py: the template has no top-level 'outputs:' line after 'ops:'")
    blocks = []
    for line in body.split("\n"):
        if line.startswith("  - op:"):
            blocks.append([line])
        elif not blocks:
            sys.exit("make_pipeline.py: expected the first node to start with '  - op:', got %r" % line)
        else:
            blocks[-1].append(line)
    nodes = []
    for block in blocks:
        names = [m.group(1) for m in (re.match(r"\s+name:\s*(\S+)", l) for l in block) if m]
        if not names:
            sys.exit("make_pipeline.py: a node without a name: %r" % block[0])
        nodes.append((names[0], "\n".join(block)))
    return head + ops_line, nodes, outputs.strip()


def write_variant(path, head, nodes, drop, outputs):
    missing = [d for d in drop if d not in [n for n, _ in nodes]]
    if missing:
        sys.exit("make_pipeline.py: the template has no node named %s" % ", ".join(missing))
    text = head + "\n".join(b for n, b in nodes if n not in drop) + "\noutputs: %s\n" % outputs
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--template", default=TEMPLATE)
    args = ap.parse_args()
    with open(args.template) as f:
        text = f.read()
    match = ANCHORS_LINE.search(text)
    if not match:
        sys.exit("make_pipeline.py: %s: expected an 'anchors: [...]  # SSD300_ANCHORS' line" % args.template)
    anchors = ssd_anchors.anchors_ltrb()
    indent = match.group(1)
    text = text[:match.start()] + indent + "anchors: " + ssd_anchors.flow_list(anchors) + text[match.end():]
    head, nodes, full_outputs = split(text)
    os.makedirs(args.out_dir, exist_ok=True)
    for name, (drop, outputs) in VARIANTS.items():
        path = os.path.join(args.out_dir, name)
        write_variant(path, head, nodes, drop, outputs or full_outputs)
        print("%s: %d nodes, %s anchors" % (path, len(nodes) - len(drop),
                                           len(anchors) if "encoder" not in drop else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
