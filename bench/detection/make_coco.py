#!/usr/bin/env python3
"""A COCO instances file for a folder of images that make_test_images wrote (its MANIFEST.tsv gives
each file's width and height), so the detection benchmark reads real photographs of varied sizes
with annotations shaped like COCO's. Deterministic: the same manifest and seed give the same bytes.

    make_coco.py IMAGE_DIR OUT.json [--seed 37] [--empty-share 0.02]

What the boxes look like (each image on its own random stream, seeded by (seed, file name)):
- 1-12 boxes per image, uniform; a share of images (--empty-share, 2%) has none, as COCO has a
  few: readers.coco with skip_empty leaves them out, on both contenders;
- sizes: a quarter tiny (2-16 px a side, some under the reader's 0.1 px size_threshold only when
  clipped: none), the rest with the box's area a log-uniform share of the image's (0.2%-100%);
  aspect (w / h) log-uniform in [1/4, 4];
- one box in six is pushed to touch a border (left, top, right or bottom edge), one in fifty spans
  the whole image; every box lies inside the image, as COCO's do;
- 80 categories with COCO's own ids (1-90 without 12, 26, 29, 30, 45, 66, 68, 69, 71, 83):
  non-contiguous, so the readers' remapping to 1..80 is exercised;
- a rectangle polygon as "segmentation", "area" = w * h, "iscrowd" 0.
"""
import argparse
import collections
import json
import math
import os
import random
import sys

COCO_MISSING_IDS = {12, 26, 29, 30, 45, 66, 68, 69, 71, 83}
CATEGORY_IDS = [i for i in range(1, 91) if i not in COCO_MISSING_IDS]
assert len(CATEGORY_IDS) == 80


def read_manifest(image_dir):
    """[(file name, width, height)] from make_test_images' MANIFEST.tsv (header, then one row a file)."""
    path = os.path.join(image_dir, "MANIFEST.tsv")
    if not os.path.isfile(path):
        sys.exit("make_coco.py: expected %s (make_test_images --dataset writes it), found none" % path)
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        try:
            name_at, w_at, h_at = header.index("name"), header.index("width"), header.index("height")
        except ValueError:
            sys.exit("make_coco.py: %s: expected columns name, width, height, got %s" % (path, header))
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) > max(name_at, w_at, h_at):
                rows.append((cols[name_at], int(cols[w_at]), int(cols[h_at])))
    if not rows:
        sys.exit("make_coco.py: %s lists no files" % path)
    return rows


def draw_box(rng, width, height):
    """One [x, y, w, h] inside a width x height image (floats, pixels)."""
    if rng.random() < 0.02:
        return [0.0, 0.0, float(width), float(height)]
    aspect = math.exp(rng.uniform(math.log(0.25), math.log(4.0)))
    if rng.random() < 0.25:  # tiny
        side = rng.uniform(2.0, 16.0)
        w, h = side * math.sqrt(aspect), side / math.sqrt(aspect)
    else:
        area = math.exp(rng.uniform(math.log(0.002), 0.0)) * width * height
        w, h = math.sqrt(area * aspect), math.sqrt(area / aspect)
    w, h = min(max(w, 1.0), width), min(max(h, 1.0), height)
    x, y = rng.uniform(0, width - w), rng.uniform(0, height - h)
    if rng.random() < 1 / 6:  # touching a border
        edge = rng.randrange(4)
        if edge == 0:
            x = 0.0
        elif edge == 1:
            y = 0.0
        elif edge == 2:
            x = width - w
        else:
            y = height - h
    # Rounded down to 1/100 px, so x + w and y + h stay inside the image.
    return [math.floor(v * 100) / 100 for v in (x, y, w, h)]


def build(rows, seed, empty_share):
    images, annotations = [], []
    for image_id, (name, width, height) in enumerate(rows, start=1):
        images.append({"id": image_id, "file_name": name, "width": width, "height": height})
        rng = random.Random("%d/%s" % (seed, name))
        count = 0 if rng.random() < empty_share else rng.randint(1, 12)
        for _ in range(count):
            x, y, w, h = draw_box(rng, width, height)
            annotations.append({
                "id": len(annotations) + 1, "image_id": image_id, "category_id": rng.choice(CATEGORY_IDS),
                "bbox": [x, y, w, h], "area": round(w * h, 2), "iscrowd": 0,
                "segmentation": [[x, y, x + w, y, x + w, y + h, x, y + h]]})
    categories = [{"id": c, "name": "category_%d" % c, "supercategory": "thing"} for c in CATEGORY_IDS]
    return {"info": {"description": "Conveyor detection benchmark (bench/detection/make_coco.py)"},
            "images": images, "annotations": annotations, "categories": categories}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("image_dir")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--empty-share", type=float, default=0.02)
    args = ap.parse_args()
    data = build(read_manifest(args.image_dir), args.seed, args.empty_share)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    os.replace(tmp, args.out)
    per_image = collections.Counter(a["image_id"] for a in data["annotations"])
    boxes = [per_image[i["id"]] for i in data["images"]]
    empty = boxes.count(0)
    print("annotations: %d images (%d without boxes), %d boxes (%.1f per image with boxes), %d categories -> %s"
          % (len(boxes), empty, len(data["annotations"]), len(data["annotations"]) / max(len(boxes) - empty, 1),
             len(data["categories"]), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
