#!/usr/bin/env python3
"""Conveyor's detection pipeline through Python, as a training loop takes it, timed by
bench/e2e/common.py's rule: the pipeline file that make_pipeline.py wrote (SSD300's 8732 anchors).

    conveyor_detection.py --yaml DIR/detection_full.yaml --coco DIR [--loader] [common options]

Without --loader: conveyor.Pipeline iterated with next_batch(ragged=pad for boxes and labels).
With --loader: conveyor.torch.Loader (output_map images_out, encoded, encoded_labels, boxes, labels;
reader_name "reader", last_batch_policy "fill", ragged boxes and labels as "pad": one padded tensor
and lengths each), torch tensors zero-copy; needs torch. A block ends with a host wait for the last
batch (our stream's synchronize for the Pipeline, torch's current stream for the Loader). Knobs reach
the file through CONVEYOR_BENCH_* (set here from the options). The result carries the encoded
targets' shape, checked to be [batch, 8732, 4].
"""
import argparse
import os
import sys

import det_common
from det_common import common

OUTPUTS = ["images_out", "encoded", "encoded_labels", "boxes", "labels"]
RAGGED = {"boxes": "pad", "labels": "pad"}


def set_env(args, device):
    os.environ.update(CONVEYOR_BENCH_DEVICE=device, CONVEYOR_BENCH_CAPTURE="true" if args.capture == "on" else "false",
                      CONVEYOR_BENCH_BATCH=str(args.batch), CONVEYOR_BENCH_THREADS=str(args.threads),
                      CONVEYOR_BENCH_PREFETCH=str(args.prefetch), CONVEYOR_BENCH_COCO=os.path.abspath(args.coco))


class PipelineSteps:
    def __init__(self, conveyor, pipe, gpu):
        self.pipe = pipe
        pipe.build()
        self.stream = conveyor.Stream() if gpu else None

    def next(self):
        return self.pipe.next_batch(ragged=RAGGED)

    def wait(self, batch):
        if self.stream is not None:
            capsule = batch["images_out"].__dlpack__(stream=self.stream.handle)  # an event wait on our stream
            del capsule  # never consumed: its destructor releases the export
            self.stream.synchronize()

    @staticmethod
    def shape(tensor):
        return list(tensor.shape)


class LoaderSteps:
    def __init__(self, pipe, gpu):
        import torch
        from conveyor.torch import Loader
        self.torch, self.gpu = torch, gpu
        self.loader = Loader(pipe, OUTPUTS, reader_name="reader", last_batch_policy="fill", ragged=RAGGED)

    def next(self):
        try:
            return next(self.loader)[0]
        except StopIteration:  # auto_reset: the next epoch starts here
            return next(self.loader)[0]

    def wait(self, batch):
        if self.gpu:
            self.torch.cuda.current_stream().synchronize()

    @staticmethod
    def shape(tensor):
        return list(tensor.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    det_common.add_args(ap)
    ap.add_argument("--yaml", required=True, help="detection_full.yaml from make_pipeline.py")
    ap.add_argument("--capture", choices=["on", "off"], default="on")
    ap.add_argument("--loader", action="store_true", help="through conveyor.torch.Loader (needs torch)")
    args = ap.parse_args()
    device = "cpu" if args.cpu_smoke else "gpu"
    common.apply_smoke(args, batch=8, threads=2, iterations=2, repeats=2, warmup=1)
    via = "conveyor.torch.Loader" if args.loader else "conveyor.Pipeline"
    label = args.label or "conveyor detection via %s" % via
    samples = det_common.coco_samples(args.coco)
    set_env(args, device)
    try:
        import conveyor
        pipe = conveyor.Pipeline(args.yaml)
        steps = LoaderSteps(pipe, device == "gpu") if args.loader else PipelineSteps(conveyor, pipe, device == "gpu")
    except ImportError as e:
        return common.skip("conveyor-python", "cannot import %s: %s" % ("torch or conveyor" if args.loader else
                                                                         "conveyor", e), label)
    state = {"batch": None}

    def step():
        state["batch"] = None  # let go of the slot first
        state["batch"] = steps.next()

    figures = common.run_timed(step, lambda: steps.wait(state["batch"]), args.batch, -(-samples // args.batch), args)
    batch = state["batch"]
    encoded_shape = steps.shape(batch["encoded"])
    det_common.check_targets(encoded_shape, label)
    result = {"contender": "conveyor-python", "label": label, "via": via, "capture": args.capture, "device": device,
              "threads": args.threads, "prefetch": args.prefetch, "samples_per_epoch": samples,
              "encoded_shape": encoded_shape, "anchors": encoded_shape[1],
              "boxes_padded_shape": steps.shape(batch["boxes"].data),
              "versions": dict(common.versions(), conveyor=conveyor.__version__)}
    result.update(figures)
    common.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
