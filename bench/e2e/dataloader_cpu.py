#!/usr/bin/env python3
"""The PyTorch DataLoader most training scripts use: worker processes (15 by default: one core is
left to the training loop) each read a file, decode it on the CPU as RGB (torchvision.io.decode_image:
libjpeg-turbo, libpng for the realistic set's PNG named .jpg, grayscale expanded to RGB) and apply v2
RandomResizedCrop(224, antialias=True) + RandomHorizontalFlip + ToDtype + Normalize, giving float16 CHW;
batches are collated, pinned (pin_memory=True) and copied to the GPU with non_blocking=True. One
iterator over a shuffled endless sample stream, so no epoch restart stalls the timed blocks. Timed
by common.py's rule (CPU busy counts the workers).

    dataloader_cpu.py --data DIR [--workers 15] [common options]
    dataloader_cpu.py --data DIR --cpu-smoke       # 2 workers, no GPU, tiny
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


class Jpegs:
    """Map-style dataset (module level: picklable, whatever the multiprocessing start method)."""

    def __init__(self, files, labels):
        self.files, self.labels, self.transform = files, labels, None

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import torch
        from torchvision.io import ImageReadMode, decode_image, read_file
        from torchvision.transforms import v2
        if self.transform is None:  # built in the worker
            self.transform = v2.Compose([
                v2.RandomResizedCrop(common.CROP, antialias=True), v2.RandomHorizontalFlip(0.5),
                v2.ToDtype(torch.float32, scale=False), v2.Normalize(common.MEAN, common.STD),
                v2.ToDtype(torch.float16, scale=False)])
        return self.transform(decode_image(read_file(self.files[i]), mode=ImageReadMode.RGB)), self.labels[i]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap, iterations=45, repeats=3)  # 3 waves of 15 workers a block
    ap.add_argument("--workers", type=int, default=15)
    args = ap.parse_args()
    common.apply_smoke(args, batch=8, iterations=2, repeats=2, warmup=1, workers=2)
    label = args.label or "pytorch dataloader %d workers" % args.workers
    try:
        import torch
        import torchvision
        from torch.utils.data import DataLoader, RandomSampler
        from torchvision.transforms import v2  # noqa: F401 (checked here, used in the workers)
    except ImportError as e:
        return common.skip("pytorch-dataloader", "cannot import torch/torchvision: %s" % e, label)
    gpu = not args.cpu_smoke
    if gpu and not torch.cuda.is_available():
        return common.skip("pytorch-dataloader", "torch sees no CUDA device", label)
    files = common.jpeg_files(args.data)
    classes = sorted({os.path.dirname(f) for f in files})
    untimed = (0 if args.no_epoch else len(files) // args.batch) + args.warmup
    total = (untimed + args.repeats * args.iterations + 1) * args.batch
    dataset = Jpegs(files, [classes.index(os.path.dirname(f)) for f in files])
    loader = DataLoader(dataset, batch_size=args.batch, num_workers=args.workers, pin_memory=gpu, drop_last=True,
                        sampler=RandomSampler(range(len(files)), num_samples=total), persistent_workers=True,
                        prefetch_factor=2)
    it = iter(loader)
    state = {}

    def step():
        images, labels = next(it)
        if gpu:
            images = images.to("cuda", non_blocking=True)
            labels = labels.to("cuda", non_blocking=True)
        state["out"] = images

    def sync():
        if gpu:
            torch.cuda.synchronize()

    figures = common.run_timed(step, sync, args.batch, len(files) // args.batch, args)
    out = state["out"]
    common.emit(dict(figures, contender="pytorch-dataloader", label=label, workers=args.workers, files=len(files),
                     device="cuda" if gpu else "cpu", output_shape=list(out.shape), output_dtype=str(out.dtype),
                     pin_memory=gpu, versions=common.versions("torch", "torchvision")))
    del it, loader
    return 0


if __name__ == "__main__":
    sys.exit(main())
