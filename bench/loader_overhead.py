"""Per-batch overhead of conveyor.torch.Loader beside raw Pipeline iteration, at batch 1.

Two identical GPU pipelines (random.uniform -> cast on the GPU, batch 1, graph capture on); one is
consumed raw (next(pipe) + torch.from_dlpack of each output), the other through Loader with epochs
(size=, "partial"), so its epoch bookkeeping and StopIteration/auto_reset are included. Blocks of
`--batches` alternate between the two, `--repeats` times; the medians of the per-batch times and
their difference are printed as JSON. Target: the loader within 5 us of raw iteration.
The pipelines' own per-iteration time varies more than 5 us between blocks, so the loader's own
cost is also measured alone: both loops over a stub "pipeline" that returns one fixed outputs dict
(the same conveyor.Tensors, exported to torch each time), where only the Python around them differs.

    python3 bench/loader_overhead.py [--batches 2000] [--repeats 15] [--epoch 100]
"""
import argparse
import json
import statistics
import time

import torch

import conveyor
from conveyor.torch import Loader

YAML = """pipeline: {name: loader_overhead, batch_size: 1, device: gpu, num_threads: 1, prefetch_depth: 3,
           seed: 1, graph_capture: true}
ops:
  - {op: random.uniform, name: u, device: gpu, args: {range: [0.0, 1.0], shape: [16]}, outputs: [u]}
  - {op: cast, name: c, device: gpu, inputs: [u], args: {dtype: float16}, outputs: [h]}
outputs: [u, h]
"""


def raw_block(pipe, n):
    start = time.perf_counter()
    for _ in range(n):
        out = next(pipe)
        u, h = torch.from_dlpack(out["u"]), torch.from_dlpack(out["h"])
    torch.cuda.current_stream().synchronize()
    return (time.perf_counter() - start) / n, (u, h)


def loader_block(loader, n):
    start = time.perf_counter()
    done = 0
    while done < n:
        for data in loader:  # epochs end and restart inside the block (auto_reset)
            u, h = data[0]["u"], data[0]["h"]
            done += 1
            if done == n:
                break
    torch.cuda.current_stream().synchronize()
    return (time.perf_counter() - start) / n, (u, h)


class FixedOutputs:
    """Iterates like a Pipeline but returns the same outputs every time: isolates the loader's cost."""

    def __init__(self, outputs):
        self.outputs = outputs

    def __iter__(self):
        return self

    def __next__(self):
        return dict(self.outputs)


def medians(raw_source, loader, batches, repeats):
    raw_block(raw_source, 200)  # warm-up: captures, pools, torch's lazy init
    loader_block(loader, 200)
    raw, wrapped = [], []
    for _ in range(repeats):
        raw.append(raw_block(raw_source, batches)[0])
        wrapped.append(loader_block(loader, batches)[0])
    return raw, wrapped


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--epoch", type=int, default=100, help="samples per loader epoch")
    args = parser.parse_args()
    raw_pipe = iter(conveyor.Pipeline(YAML))
    loader = Loader(conveyor.Pipeline(YAML), ["u", "h"], size=args.epoch, last_batch_policy="partial")
    raw, wrapped = medians(raw_pipe, loader, args.batches, args.repeats)
    fixed = next(iter(conveyor.Pipeline(YAML)))
    stub_raw, stub_loader = medians(FixedOutputs(fixed), Loader(FixedOutputs(fixed), ["u", "h"], size=args.epoch,
                                                                last_batch_policy="partial"),
                                    args.batches, args.repeats)
    raw_us, loader_us = statistics.median(raw) * 1e6, statistics.median(wrapped) * 1e6
    print(json.dumps({
        "device": torch.cuda.get_device_name(),
        "batch_size": 1, "batches_per_block": args.batches, "blocks": args.repeats,
        "raw_pipeline_us_per_batch": round(raw_us, 2),
        "loader_us_per_batch": round(loader_us, 2),
        "loader_overhead_us": round(loader_us - raw_us, 2),
        "raw_blocks_us": [round(x * 1e6, 2) for x in raw],
        "loader_blocks_us": [round(x * 1e6, 2) for x in wrapped],
        "fixed_outputs_raw_us_per_batch": round(statistics.median(stub_raw) * 1e6, 2),
        "fixed_outputs_loader_us_per_batch": round(statistics.median(stub_loader) * 1e6, 2),
        "loader_own_overhead_us": round((statistics.median(stub_loader) - statistics.median(stub_raw)) * 1e6, 2),
        "target_overhead_us": 5.0,
    }, indent=1))


if __name__ == "__main__":
    main()
