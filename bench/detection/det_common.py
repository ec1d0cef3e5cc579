"""Shared by the detection contenders: the e2e timing rule (bench/e2e/common.py), the data folder's
epoch, the SSD constants both pipelines use, and the check that the targets have one row per anchor."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.path.insert(0, HERE)
import common  # noqa: E402,F401  (re-exported: the timing rule every contender uses)
import ssd_anchors  # noqa: E402,F401

# pipelines/detection_train.yaml's values (bench/pipelines/detection_bench.yaml copies them).
THRESHOLDS = [0.1, 0.3, 0.5, 0.7, 0.9]
SCALING = [0.3, 1.0]
ASPECT_RATIO = [0.5, 2.0]
SIZE = 300
MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
ENCODER = {"criteria": 0.5, "offset": True, "scale": 1.0, "means": [0.0, 0.0, 0.0, 0.0],
           "stds": [0.1, 0.1, 0.2, 0.2]}


def add_args(ap):
    common.add_common_args(ap)
    ap.add_argument("--coco", default=os.environ.get("CONVEYOR_BENCH_COCO", ""),
                    help="folder with images/ and annotations.json (bench/detection/run.sh makes it)")


def coco_samples(coco):
    """Images with at least one box in coco/annotations.json: the epoch with skip_empty."""
    path = os.path.join(coco or "", "annotations.json")
    if not os.path.isfile(path) or not os.path.isdir(os.path.join(coco, "images")):
        sys.exit("expected --coco (or $CONVEYOR_BENCH_COCO) to hold images/ and annotations.json, got %r" % coco)
    with open(path) as f:
        data = json.load(f)
    return len({a["image_id"] for a in data["annotations"]})


def check_targets(shape, what):
    """Raises unless `shape` is [batch, 8732, 4] (the encoded boxes of one batch)."""
    if len(shape) != 3 or shape[1] != ssd_anchors.EXPECTED or shape[2] != 4:
        raise SystemExit("%s: expected encoded boxes of shape [batch, %d, 4], got %s"
                         % (what, ssd_anchors.EXPECTED, list(shape)))
