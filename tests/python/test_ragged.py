"""Outputs whose samples differ in shape (docs/python.md, "Outputs of varying shape"): per-sample
lists, padded tensors with lengths, and the torch Loader's DALI-like refusal by default — over real
pipelines on the CPU: readers.coco on a small hand-written dataset (boxes [N, 4], N = 0 included;
the images are never decoded, so their files are any bytes) and external_source fed ragged arrays.
The torch tests skip without torch (CPU) or without a GPU."""
import json
import os

import pytest

try:
    import conveyor
    from conveyor.torch import Loader
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")

# Per image (ids 1..6, 20x10 pixels): its boxes (x, y, w, h) and categories 1 or 7 (labels 1, 2).
ANNOTATIONS = {1: [((1, 1, 4, 3), 1), ((10, 2, 5, 5), 7)], 2: [], 3: [((0, 0, 20, 10), 7)],
               4: [((2, 2, 2, 2), 1), ((3, 3, 6, 4), 1), ((12, 1, 7, 8), 7)], 5: [], 6: [((5, 5, 3, 3), 1)]}
LABELS = {1: 1, 7: 2}


def boxes_of(image):
    return np.array([b for b, _ in ANNOTATIONS[image]], dtype=np.float32).reshape(-1, 4)


def labels_of(image):
    return np.array([LABELS[c] for _, c in ANNOTATIONS[image]], dtype=np.int32)


@pytest.fixture
def coco(tmp_path):
    root = tmp_path / "images"
    root.mkdir()
    images, anns = [], []
    for image, boxes in ANNOTATIONS.items():
        (root / ("%d.jpg" % image)).write_bytes(b"x" * image)
        images.append({"id": image, "file_name": "%d.jpg" % image, "width": 20, "height": 10})
        for box, category in boxes:
            anns.append({"id": len(anns) + 1, "image_id": image, "category_id": category, "bbox": list(box),
                         "iscrowd": 0, "area": box[2] * box[3], "segmentation": []})
    categories = [{"id": c, "name": "c%d" % c} for c in LABELS]
    (tmp_path / "instances.json").write_text(json.dumps({"images": images, "annotations": anns,
                                                         "categories": categories}))
    return str(tmp_path)


def coco_yaml(extra_ops="", outputs="bboxes, labels, ids", device="cpu"):
    return ("pipeline: {name: ragged, batch_size: 4, device: %s, num_threads: 2, prefetch_depth: 2, seed: 1}\n"
            "ops:\n"
            "  - {op: readers.coco, name: reader, args: {file_root: images, annotations_file: instances.json, "
            "image_ids: true}, outputs: [jpegs, bboxes, labels, ids]}\n%s"
            "outputs: [%s]\n" % (device, extra_ops, outputs))


def coco_pipeline(root, **kwargs):
    return conveyor.Pipeline.from_yaml(coco_yaml(**kwargs), base_dir=root)


def host(t):
    """A numpy view of a conveyor.Tensor (Pipeline) or the array itself (a numpy Loader)."""
    return t if isinstance(t, np.ndarray) else np.from_dlpack(t)


def ids_of(batch):
    ids = batch["ids"]
    if isinstance(ids, conveyor.Padded):
        ids = ids.data
    return [int(host(i).reshape(-1)[0]) for i in ids] if isinstance(ids, list) else host(ids).reshape(-1).tolist()


def check_padded(padded, images, pad_value, boxes=True):
    data, lengths = padded  # unpacks as a pair
    data, lengths, shapes = host(data), host(lengths), host(padded.shapes)
    expected = [boxes_of(i) if boxes else labels_of(i) for i in images]
    longest = max(len(e) for e in expected)
    assert data.shape == ((len(images), longest, 4) if boxes else (len(images), longest))
    assert lengths.dtype == np.int64 and lengths.tolist() == [len(e) for e in expected]
    assert shapes.tolist() == [list(e.shape) for e in expected]
    for row, e in zip(data, expected):
        np.testing.assert_array_equal(row[:len(e)], e)
        assert (row[len(e):] == pad_value).all(), "padding holds pad_value"


# ---- Pipeline ------------------------------------------------------------------------------------

def test_pipeline_gives_lists_by_default_and_padded_batches_on_request(coco):
    pipe = coco_pipeline(coco).build()
    out = pipe.outputs()
    assert isinstance(out["bboxes"], list) and [t.shape for t in out["bboxes"]] == [(2, 4), (0, 4), (1, 4), (3, 4)]
    np.testing.assert_array_equal(np.from_dlpack(out["bboxes"][3]), boxes_of(4))
    pipe.run()
    out = pipe.outputs(ragged={"bboxes": "pad", "labels": "pad"}, pad_value={"bboxes": -1.5, "labels": -1})
    assert ids_of(out) == [5, 6, 1, 2]
    assert isinstance(out["bboxes"], conveyor.Padded)
    check_padded(out["bboxes"], [5, 6, 1, 2], -1.5)
    check_padded(out["labels"], [5, 6, 1, 2], -1, boxes=False)
    assert out["bboxes"].data.device[0] == 1 and out["bboxes"].lengths.dtype == "int64"


def test_padded_is_new_memory_and_every_batch_is_padded(coco):
    pipe = coco_pipeline(coco).build()
    kept = [pipe.next_batch(ragged="pad")["bboxes"] for _ in range(3)]  # kept: they hold no slot
    for padded, images in zip(kept, ([1, 2, 3, 4], [5, 6, 1, 2], [3, 4, 5, 6])):
        check_padded(padded, images, 0)
    for k in range(3):  # the iterator's own path, options per output by position
        batch = pipe.next_batch(ragged=["pad", "list", "pad"], pad_value=[0, 0, 7])
        ids = ids_of(batch)  # uniform [1] ids, padded all the same
        assert host(batch["ids"].lengths).tolist() == [1] * 4
        check_padded(batch["bboxes"], ids, 0)
        assert isinstance(batch["labels"], list)


def test_samples_without_boxes_pad_to_an_empty_batch(tmp_path):
    pipe = conveyor.Pipeline.from_yaml(
        "pipeline: {batch_size: 3, device: cpu, prefetch_depth: 2}\n"
        "ops:\n  - {op: external_source, name: src, args: {dtype: float32, ndim: 2}, outputs: [x]}\n"
        "outputs: [x]\n")
    ragged = [np.arange(4 * n, dtype=np.float32).reshape(n, 4) + 1 for n in (2, 0, 3)]
    empty = [np.zeros((0, 4), np.float32)] * 3
    pipe.feed("src", ragged)
    pipe.feed("src", empty)
    pipe.build()
    out = pipe.outputs(ragged="pad", pad_value=-1)
    data, lengths = (host(t) for t in out["x"])
    assert data.shape == (3, 3, 4) and lengths.tolist() == [2, 0, 3]
    for row, sample in zip(data, ragged):
        np.testing.assert_array_equal(row[:len(sample)], sample)
        assert (row[len(sample):] == -1).all()
    out = pipe.outputs(ragged="pad")  # the second fed batch (build scheduled both)
    assert host(out["x"].data).shape == (3, 0, 4)
    assert host(out["x"].lengths).tolist() == [0, 0, 0]
    assert host(out["x"].shapes).tolist() == [[0, 4]] * 3


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(ragged="padded"), ValueError, "ragged: expected \"list\", \"pad\" or None for an output, got 'padded'"),
    (dict(ragged={"boxes": "pad"}), ValueError, "ragged: names 'boxes', which is no output of (outputs: bboxes, "
                                                "labels, ids)"),
    (dict(ragged="pad", pad_value=[1]), ValueError, "pad_value: expected one entry per output (3: bboxes, labels, "
                                                    "ids), got 1"),
    (dict(ragged="pad", pad_value="0"), ValueError, "pad_value: expected a number for an output, got '0'"),
    (dict(ragged={"labels": "pad"}, pad_value=1e10), conveyor.InvalidArgumentError,
     'output "labels": pad_value: expected a value that int32 holds, got 10000000000'),
])
def test_bad_options_and_pad_values_say_what_was_expected(coco, kwargs, error, message):
    pipe = coco_pipeline(coco).build()
    with pytest.raises(error) as e:
        pipe.outputs(**kwargs)
    assert message in str(e.value)


# ---- the torch Loader's logic, without torch (numpy.from_dlpack) ----------------------------------

def loader(root, **kwargs):
    return Loader(coco_pipeline(root), ["boxes", "labels", "ids"], reader_name="reader",
                  last_batch_policy="partial", to_tensor=np.from_dlpack, **kwargs)


def test_loader_refuses_ragged_outputs_by_default_as_dali(coco):
    with pytest.raises(ValueError) as e:
        next(loader(coco))
    assert str(e.value) == (
        "Loader: output 'boxes' has samples of different shapes in pipeline batch 0 ((2, 4), (0, 4), (1, 4), "
        "(3, 4)); DALI's iterators refuse this too: pass ragged={'boxes': \"pad\"} for a padded tensor and lengths "
        "(pad_value=...), ragged={'boxes': \"list\"} for a list of per-sample tensors, or pad it in the pipeline")
    with pytest.raises(ValueError, match=r"Loader: ragged: names 'bboxes', which is no output of \(outputs: boxes, "
                                         r"labels, ids\)"):
        loader(coco, ragged={"bboxes": "pad"})


def test_loader_lists_and_pads_per_output_with_partial_batches_trimmed(coco):
    lists = loader(coco, ragged="list")
    sizes = []
    for (batch,) in lists:
        sizes.append(len(batch["boxes"]))
        for image, boxes in zip(ids_of(batch), batch["boxes"]):
            np.testing.assert_array_equal(boxes, boxes_of(image))
    assert sizes == [4, 2]
    padded = loader(coco, ragged={"boxes": "pad", "labels": "pad"}, pad_value={"labels": -1})
    # Two epochs of 6: the second starts inside the pipeline batch that ended the first (trimmed).
    for expected in ([[1, 2, 3, 4], [5, 6]], [[1, 2], [3, 4, 5, 6]]):
        seen = []
        for (b,) in padded:  # (a kept batch would hold its slot through its "ids")
            seen.append(ids_of(b))
            boxes, counts = b["boxes"]
            assert isinstance(boxes, np.ndarray) and counts.tolist() == [len(ANNOTATIONS[i]) for i in ids_of(b)]
            assert len(boxes) == len(counts) == len(b["boxes"].shapes) == len(ids_of(b))
            for image, row, n in zip(ids_of(b), boxes, counts):
                np.testing.assert_array_equal(row[:n], boxes_of(image))
                assert (row[n:] == 0).all()
            labels, n_labels = b["labels"]
            assert n_labels.tolist() == counts.tolist()
            for image, row, n in zip(ids_of(b), labels, n_labels):
                assert row[:n].tolist() == labels_of(image).tolist() and (row[n:] == -1).all()
        assert seen == expected


# ---- torch ----------------------------------------------------------------------------------------

def test_torch_loader_pads_on_the_cpu(coco):
    torch = pytest.importorskip("torch")
    data = next(Loader(coco_pipeline(coco), ["boxes", "labels", "ids"], ragged="pad", pad_value=-1))[0]
    boxes, counts = data["boxes"]
    assert isinstance(boxes, torch.Tensor) and boxes.shape == (4, 3, 4) and counts.dtype == torch.int64
    assert counts.tolist() == [2, 0, 1, 3]
    mask = torch.arange(boxes.shape[1])[None, :] < counts[:, None]  # the usual masking
    assert (boxes[~mask] == -1).all()
    assert torch.equal(boxes[3], torch.from_numpy(boxes_of(4)))


def test_gpu_torch_loader_pads_on_the_device(coco, torch):
    ops = "  - {op: copy, name: gpu_boxes, device: gpu, inputs: [bboxes], outputs: [gboxes]}\n"
    pipe = conveyor.Pipeline.from_yaml(coco_yaml(ops, outputs="gboxes, labels, ids", device="gpu"), base_dir=coco)
    loader = Loader(pipe, ["boxes", "labels", "ids"], reader_name="reader", last_batch_policy="partial",
                    ragged={"boxes": "pad", "labels": "list"}, pad_value=-2)
    for _ in range(2):
        for (batch,) in loader:
            boxes, counts = batch["boxes"]
            assert boxes.is_cuda and not counts.is_cuda
            for image, row, n in zip(batch["ids"].reshape(-1).tolist(), boxes.cpu(), counts.tolist()):
                assert torch.equal(row[:n], torch.from_numpy(boxes_of(image)))
                assert (row[n:] == -2).all()
