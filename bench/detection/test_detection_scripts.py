"""Tests of the detection benchmark's scripts (no GPU, no DALI, no Conveyor binary): SSD300's anchors,
the annotations, the pipeline variants, the output check and the results page's ratios.

    /usr/bin/python3 -m pytest -q bench/detection
"""
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_outputs  # noqa: E402
import make_coco  # noqa: E402
import ssd_anchors  # noqa: E402


def test_ssd300_has_8732_anchors_with_area_and_the_reference_sizes():
    anchors = ssd_anchors.anchors_ltrb()
    assert len(anchors) == 8732
    assert all(r > l and b > t for l, t, r, b in anchors)
    # The first map's first box: centre (0.5 / 37.5, same), side 21 / 300.
    l, t, r, b = anchors[0]
    assert abs((l + r) / 2 - 0.5 / 37.5) < 1e-9 and abs((r - l) - 0.07) < 1e-9
    # The 1x1 map's boxes are centred and clamped to width/height <= 1 (the reference clamps xywh).
    assert all(abs((a[0] + a[2]) / 2 - 0.5) < 1e-9 and a[2] - a[0] <= 1 + 1e-9 for a in anchors[-4:])


def test_the_three_coarsest_maps_equal_pipelines_detection_train_yaml():
    with open(os.path.join(HERE, "..", "..", "pipelines", "detection_train.yaml")) as f:
        values = [float(v) for v in re.search(r"anchors: \[(.*?)\]", f.read(), re.S).group(1).replace("\n", " ").split(",")]
    shipped = {tuple(round(v, 3) for v in values[i:i + 4]) for i in range(0, len(values), 4)}
    mine = {tuple(round(v, 3) for v in a) for a in ssd_anchors.anchors_ltrb()[8542:]}
    assert len(shipped) == 190 and shipped == mine


def write_manifest(folder, sizes):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "MANIFEST.tsv"), "w") as f:
        f.write("name\tformat\twidth\theight\n")
        for i, (w, h) in enumerate(sizes):
            f.write("img_%05d.jpg\tjpeg\t%d\t%d\n" % (i, w, h))


def test_annotations_are_deterministic_inside_the_images_and_coco_shaped(tmp_path):
    sizes = [(500, 375), (215, 143), (3000, 2000), (64, 640)] * 50
    write_manifest(str(tmp_path / "img"), sizes)
    a = make_coco.build(make_coco.read_manifest(str(tmp_path / "img")), 37, 0.02)
    b = make_coco.build(make_coco.read_manifest(str(tmp_path / "img")), 37, 0.02)
    assert json.dumps(a) == json.dumps(b)
    per_image = {}
    for ann in a["annotations"]:
        per_image[ann["image_id"]] = per_image.get(ann["image_id"], 0) + 1
        w, h = sizes[ann["image_id"] - 1]
        x, y, bw, bh = ann["bbox"]
        assert 0 <= x and 0 <= y and bw > 0 and bh > 0 and x + bw <= w and y + bh <= h
        assert ann["category_id"] in make_coco.CATEGORY_IDS
    counts = [per_image.get(i["id"], 0) for i in a["images"]]
    assert max(counts) <= 12 and counts.count(0) >= 1
    assert len(a["categories"]) == 80 and 12 not in {c["id"] for c in a["categories"]}
    touching = sum(1 for ann in a["annotations"] if ann["bbox"][0] == 0 or ann["bbox"][1] == 0)
    tiny = sum(1 for ann in a["annotations"] if max(ann["bbox"][2:]) < 20)
    assert touching > 10 and tiny > 10


def test_pipeline_variants_hold_the_anchors_and_drop_nodes(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(HERE, "make_pipeline.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "8732 anchors" in out
    full = (tmp_path / "detection_full.yaml").read_text()
    numbers = re.search(r"anchors: \[(.*?)\]", full, re.S).group(1).split(",")
    assert len(numbers) == 4 * 8732
    assert full.rstrip().endswith("outputs: [images_out, encoded, encoded_labels, boxes, labels]")
    no_enc = (tmp_path / "detection_no_encoder.yaml").read_text()
    assert "op: box_encoder" not in no_enc and "op: copy" not in no_enc and "op: bb_flip" in no_enc
    decode = (tmp_path / "detection_decode_only.yaml").read_text()
    assert decode.count("- op:") == 2 and decode.rstrip().endswith("outputs: [images]")


def write_npy(path, descr, shape, values):
    header = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    code = {"<f4": "f", "<i4": "i"}.get(descr)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        if code:
            f.write(struct.pack("<%d%s" % (len(values), code), *values))


def test_check_outputs_accepts_a_right_encoding_and_names_a_wrong_one(tmp_path):
    anchors = ssd_anchors.anchors_ltrb()
    n = len(anchors)
    a = 5000
    box = anchors[a]  # a box equal to its anchor encodes as zeros with label 7
    enc, lab = [0.0] * (n * 4), [0] * n
    lab[a] = 7
    write_npy(str(tmp_path / "images_out_000000.npy"), "<f2", (1, 3, 300, 300), [])
    write_npy(str(tmp_path / "encoded_000000.npy"), "<f4", (1, n, 4), enc)
    write_npy(str(tmp_path / "encoded_labels_000000.npy"), "<i4", (1, n), lab)
    write_npy(str(tmp_path / "boxes_000000.npy"), "<f4", (1, 1, 4), list(box))
    run = lambda: subprocess.run([sys.executable, os.path.join(HERE, "check_outputs.py"), str(tmp_path)],  # noqa: E731
                                 capture_output=True, text=True)
    ok = run()
    assert ok.returncode == 0 and "1 matched anchors" in ok.stdout, ok.stdout
    enc[a * 4] = 1.0  # the decoded box moves by 0.1 anchor widths: none of the sample's boxes
    write_npy(str(tmp_path / "encoded_000000.npy"), "<f4", (1, n, 4), enc)
    bad = run()
    assert bad.returncode == 1 and "anchor 5000 (label 7)" in bad.stdout


def row(name, raw, rate, who):
    r = {"tags": {"who": who, "process": "1"}, "label": name, "measure": {"gpu_mem_peak_mib": 900.0}}
    if who == "conveyor":
        r["samples_per_s"] = {"median": rate, "min": rate * 0.8, "max": rate * 1.1}
    else:
        r.update(images_per_s=rate, images_per_s_min=rate * 0.9, images_per_s_max=rate * 1.1)
    with open(os.path.join(raw, name + ".json"), "w") as f:
        json.dump(r, f)


def test_results_ratio_against_dalis_best_mode(tmp_path):
    raw, out = str(tmp_path / "raw"), str(tmp_path / "out")
    os.makedirs(raw)
    row("conveyor_cli_p1", raw, 12000.0, "conveyor")
    row("conveyor_cli_p2", raw, 10000.0, "conveyor")
    row("dali_unfused_p1", raw, 7000.0, "dali")
    row("dali_fused_p1", raw, 10000.0, "dali")
    behind = subprocess.run([sys.executable, os.path.join(HERE, "results.py"), "--raw", raw, "--behind"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert behind == "behind (1.10)"  # 11000 (median of 12000, 10000) / 10000 (fused, DALI's best)
    subprocess.run([sys.executable, os.path.join(HERE, "results.py"), "--raw", raw, "--out", out], check=True,
                   capture_output=True)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    assert res["target"]["ratio"] == 1.1 and res["target"]["met"] is False
    assert res["summary"]["conveyor_cli"]["slowest_block"] == 8000.0
    assert res["summary"]["conveyor_cli"]["ratio_to_dali_unfused"] == round(11000 / 7000, 3)
    md = open(os.path.join(out, "RESULTS.md")).read()
    assert "**Conveyor (C++) / DALI's best: 1.10x** (target 1.25x: NOT met)" in md
