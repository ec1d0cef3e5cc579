#!/usr/bin/env python3
"""DALI 2.4's SSD training input on the benchmark's COCO folder, as DALI's own SSD example builds it
(docs/examples/use_cases/pytorch/single_stage_detector/src/coco_pipeline.py) with its pixel work
on the GPU, and with the arguments of pipelines/detection_train.yaml, so that both contenders do
the same work; timed by bench/e2e/common.py's rule. Without DALI the row is reported as skipped.

    dali_detection.py --coco DIR --mode unfused|fused [--encoder cpu|gpu] [common options of bench/e2e]

| mode    | pipeline                                                                                  |
|---------|-------------------------------------------------------------------------------------------|
| unfused | readers.coco → decoders.image (mixed) → random_bbox_crop → slice (GPU): Conveyor's operators |
| fused   | readers.coco → random_bbox_crop → decoders.image_slice (mixed, decodes only the window): DALI's fastest |
then resize 300x300 (GPU, DALI's default linear + antialias) → coin_flip → bb_flip (CPU) and
crop_mirror_normalize (GPU, mirror, float16 CHW, ImageNet mean/std) → box_encoder (CPU, as in DALI's
example and as Conveyor's) with SSD300's 8732 anchors (ssd_anchors.py),
criteria 0.5, offsets with stds [0.1, 0.1, 0.2, 0.2] → the targets moved to the GPU (`.gpu()`).
--encoder gpu runs DALI's GPU box_encoder instead (boxes and labels moved with `.gpu()` before it), as
Conveyor's benchmark pipeline encodes on the GPU: the row that makes "DALI's best" include it.
readers.coco: skip_empty, ltrb, ratio, random_shuffle, shard 0 of 1. num_threads and
prefetch_queue_depth: --threads / --prefetch, matched to Conveyor's; hw_decoder_load: DALI's default.
"""
import argparse
import sys

import det_common
from det_common import common, ssd_anchors


def build(args, gpu, fn, types, pipeline_def, anchors):
    dec, op = ("mixed", "gpu") if gpu else ("cpu", "cpu")

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=0 if gpu else None, seed=1234,
                  prefetch_queue_depth=args.prefetch)
    def ssd():
        jpegs, bboxes, labels = fn.readers.coco(
            file_root=args.coco + "/images", annotations_file=args.coco + "/annotations.json", skip_empty=True,
            ltrb=True, ratio=True, random_shuffle=True, shard_id=0, num_shards=1, name="reader")
        anchor, shape, bboxes, labels = fn.random_bbox_crop(
            bboxes, labels, thresholds=det_common.THRESHOLDS, threshold_type="iou", scaling=det_common.SCALING,
            aspect_ratio=det_common.ASPECT_RATIO, allow_no_crop=True, num_attempts=1, ltrb=True)
        if args.mode == "fused":
            # The window always lies inside the image (random_bbox_crop's), so the out-of-bounds
            # policy that image_slice lacks would change nothing.
            images = fn.decoders.image_slice(jpegs, anchor, shape, device=dec, output_type=types.RGB)
        else:
            images = fn.decoders.image(jpegs, device=dec, output_type=types.RGB)
            images = fn.slice(images, anchor, shape, device=op, out_of_bounds_policy="trim_to_shape")
        images = fn.resize(images, device=op, resize_x=det_common.SIZE, resize_y=det_common.SIZE)
        mirror = fn.random.coin_flip(probability=0.5)
        bboxes = fn.bb_flip(bboxes, ltrb=True, horizontal=mirror)
        images = fn.crop_mirror_normalize(images, device=op, mirror=mirror, mean=det_common.MEAN,
                                          std=det_common.STD, dtype=types.FLOAT16, output_layout="CHW")
        if gpu and args.encoder == "gpu":
            encoded, encoded_labels = fn.box_encoder(bboxes.gpu(), labels.gpu(), device="gpu", anchors=anchors,
                                                     **det_common.ENCODER)
        else:
            encoded, encoded_labels = fn.box_encoder(bboxes, labels, anchors=anchors, **det_common.ENCODER)
            if gpu:
                encoded, encoded_labels = encoded.gpu(), encoded_labels.gpu()
        return images, encoded, encoded_labels, bboxes, labels

    return ssd()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    det_common.add_args(ap)
    ap.add_argument("--mode", choices=["unfused", "fused"], default="unfused")
    ap.add_argument("--encoder", choices=["cpu", "gpu"], default="cpu", help="where box_encoder runs (GPU runs only)")
    args = ap.parse_args()
    gpu = not args.cpu_smoke
    common.apply_smoke(args, batch=8, threads=2, iterations=2, repeats=2, warmup=1)
    label = args.label or "dali detection %s%s" % (args.mode, ", GPU box_encoder" if args.encoder == "gpu" else "")
    try:
        from nvidia.dali import fn, pipeline_def, types
    except ImportError as e:
        return common.skip("dali", "cannot import nvidia.dali (stage it with tools/stage_dali.sh and put "
                           "its folder on PYTHONPATH): %s" % e, label)
    samples = det_common.coco_samples(args.coco)
    anchors = [v for a in ssd_anchors.anchors_ltrb() for v in a]
    pipe = build(args, gpu, fn, types, pipeline_def, anchors)
    pipe.build()
    state = {"out": None}

    def step():
        state["out"] = pipe.run()

    def sync():
        if gpu:
            state["out"][0].as_cpu()  # a host copy of the images: the iteration's GPU work is done

    figures = common.run_timed(step, sync, args.batch, -(-samples // args.batch), args)
    encoded = state["out"][1].as_cpu() if gpu else state["out"][1]
    enc_shape = list(encoded.as_array().shape)
    det_common.check_targets(enc_shape, label)
    labels = state["out"][2].as_cpu() if gpu else state["out"][2]
    matched = int((labels.as_array() > 0).sum())
    result = {"contender": "dali", "label": label, "mode": args.mode, "device": "gpu" if gpu else "cpu",
              "encoder": args.encoder if gpu else "cpu",
              "threads": args.threads, "prefetch": args.prefetch, "hw_decoder_load": "default",
              "samples_per_epoch": samples, "encoded_shape": enc_shape, "anchors": enc_shape[1],
              "matched_anchors_last_batch": matched,
              "versions": common.versions("nvidia.dali", "nvidia.nvimgcodec", "numpy")}
    result.update(figures)
    common.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
