#!/usr/bin/env python3
"""One Conveyor pipeline per rank under torchrun: sharding coverage and throughput (issues 14, 36).

    # 1 process (the baseline), then 2 on 2 GPUs; the second prints the table with the scaling:
    torchrun --nproc_per_node 1 tests/distributed/torchrun_check.py --data DIR --out /tmp/tr1.json
    torchrun --nproc_per_node 2 tests/distributed/torchrun_check.py --data DIR --baseline /tmp/tr1.json
    # two processes sharing one GPU (proves the sharding where one GPU is all there is):
    torchrun --nproc_per_node 2 tests/distributed/torchrun_check.py --data DIR --share-gpu
    # the same over shards (issue 36): the JPEGs written as 8 WebDataset tars / TFRecord files
    torchrun --nproc_per_node 2 tests/distributed/torchrun_check.py --data DIR --reader webdataset
    torchrun --nproc_per_node 2 tests/distributed/torchrun_check.py --data DIR --reader tfrecord \
        --shuffle shards --no-index --http

Every rank builds the same YAML (written here) — device_id: ${LOCAL_RANK:-0}, shard_id: ${RANK:-0},
num_shards: ${WORLD_SIZE:-1}, random_shuffle, pad_last_batch — and iterates it through
conveyor.torch.Loader for --epochs epochs. Nothing in Conveyor talks to other ranks; this script
gathers, over torch.distributed (gloo, CPU tensors), the labels each rank saw per epoch — the file
list gives every file its own label, so a label names a sample — and rank 0 checks: the union is the
dataset, ranks are disjoint except each rank's padding (repeats of its own last sample), every rank
ran the same number of batches, and the permutation changed between epochs. Throughput: real
images per second of the last epoch (the first one includes warm-up and graph capture), per rank
and summed. Exit status 1 when a check fails. NCCL / NVLink settings of the environment are left
as they are (gloo does not use them).

--reader webdataset | tfrecord: rank 0 writes the JPEGs as --shards shard files (shard_data.py:
sample i labelled i, with index files unless --no-index) into --shard-dir (default a temporary
folder; ranks must share it: one host under --standalone), and every rank reads them with that
reader in --shuffle samples (cut by samples) or shards (cut by whole shards, shuffle buffer);
--http serves them from a loopback server (tests/operators/readers/io/http_test_server.py: ranges)
and the readers read URLs. The checks are the same.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import shard_data  # noqa: E402

HEAD = """
pipeline:
  name: torchrun_train
  batch_size: {batch}
  device: gpu
  device_id: "${{LOCAL_RANK:-0}}"
  num_threads: {threads}
  prefetch_depth: 2
  seed: 1234
  graph_capture: true
ops:
"""

FILE_READER = """  - op: readers.file
    name: reader
    args: {{file_list: "{file_list}", random_shuffle: true, pad_last_batch: true,
           shard_id: "${{RANK:-0}}", num_shards: "${{WORLD_SIZE:-1}}"}}
    outputs: [jpegs, labels]
"""

TAIL = """  - {op: decoders.image, name: decode, device: gpu, inputs: [jpegs], outputs: [images]}
  - {op: random_resized_crop, name: crop, device: gpu, inputs: [images], args: {size: [224, 224]},
     outputs: [crops]}
  - {op: random.coin_flip, name: coin, outputs: [mirror]}
  - {op: crop_mirror_normalize, name: normalize, device: gpu, inputs: [crops],
     args: {mirror: $mirror, mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375],
            dtype: float16, output_layout: CHW}, outputs: [images_out]}
outputs: [images_out, labels]
"""


def write_file_list(data, folder):
    """A list of every JPEG under `data`, sorted, each with its own label (its index)."""
    files = shard_data.jpeg_files(data)
    if not files:
        raise SystemExit("torchrun_check: no .jpg files under %s" % data)
    path = os.path.join(folder, "files.txt")
    with open(path, "w") as f:
        for i, name in enumerate(files):
            f.write("%s %d\n" % (os.path.relpath(name, folder), i))
    return path, len(files)


def check_coverage(per_rank, n, batches):
    """per_rank[r][e]: labels rank r saw in epoch e. Returns a list of failures (empty: all good)."""
    failures = []
    world = len(per_rank)
    if len(set(batches)) != 1:
        failures.append("batch counts differ between ranks: %s" % batches)
    orders = []
    for e in range(len(per_rank[0])):
        union = set()
        order = []
        for r in range(world):
            seen = per_rank[r][e]
            distinct = list(dict.fromkeys(seen))
            tail = seen[len(distinct):]
            if seen[:len(distinct)] != distinct or any(x != distinct[-1] for x in tail):
                failures.append("epoch %d rank %d: repeats other than padding with its last sample" % (e, r))
            overlap = union & set(distinct)
            if overlap:
                failures.append("epoch %d: rank %d shares %d samples with lower ranks (e.g. %d)" %
                                (e, r, len(overlap), min(overlap)))
            union |= set(distinct)
            order += distinct
        if union != set(range(n)):
            failures.append("epoch %d: ranks together saw %d of %d samples" % (e, len(union), n))
        orders.append(order)
    for e in range(1, len(orders)):
        if orders[e] == orders[e - 1]:
            failures.append("epoch %d repeats epoch %d's order" % (e, e - 1))
    return failures


def serve(folder):
    """The loopback test server (Range support) over `folder`: (process, "http://127.0.0.1:<port>")."""
    script = os.path.join(HERE, "..", "operators", "readers", "io", "http_test_server.py")
    server = subprocess.Popen([sys.executable, script, "--root", folder, "--exit-on-stdin-eof"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        raise SystemExit("torchrun_check: http_test_server.py printed %r, expected \"PORT <n>\"" % line)
    return server, "http://127.0.0.1:" + line[1]


def shard_reader_node(args, rank, dist):
    """Rank 0 writes the shards (and serves them with --http); every rank gets the reader node.
    Returns (node YAML, samples, rank 0's server process or None, a folder rank 0 made or None)."""
    files = shard_data.jpeg_files(args.data)
    if not files:
        raise SystemExit("torchrun_check: no .jpg files under %s" % args.data)
    shared = [None, None, None]  # from rank 0: the folder, the URL prefix, the shard names
    server = made = None
    if rank == 0:
        made = None if args.shard_dir else tempfile.mkdtemp(prefix="torchrun_shards_")
        folder = args.shard_dir or made
        os.makedirs(folder, exist_ok=True)
        start = time.perf_counter()
        paths, _ = shard_data.write_shards(args.reader, files, folder, args.shards)
        print("torchrun_check: wrote %d %s shards of %d JPEGs to %s in %.1f s" %
              (len(paths), args.reader, len(files), folder, time.perf_counter() - start))
        shared = [folder, None, [os.path.basename(p) for p in paths]]
        if args.http:
            server, shared[1] = serve(folder)
    dist.broadcast_object_list(shared, 0)
    folder, prefix, names = shared
    # The same shards on every rank, as paths or as URLs of rank 0's server.
    where = (prefix + "/") if prefix else (folder + "/")
    paths = [where + f for f in names]
    index_paths = None if args.no_index else [where + f + ".idx" for f in names]
    node = shard_data.reader_node(args.reader, paths, index_paths, args.shuffle, args.initial_fill)
    return node, len(files), server, made


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="a folder of JPEGs (e.g. make_test_images DIR --photos 4096)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--share-gpu", action="store_true", help="every rank on GPU 0 (LOCAL_RANK forced to 0)")
    ap.add_argument("--out", help="write this run's figures as JSON (the --baseline of a later run)")
    ap.add_argument("--baseline", help="a 1-process run's --out, for the scaling column")
    ap.add_argument("--reader", choices=shard_data.READERS, default="file",
                    help="file: a file list of the JPEGs; webdataset / tfrecord: the JPEGs written as shards")
    ap.add_argument("--shuffle", choices=("samples", "shards"), default="samples",
                    help="shard readers: exact permutation cut by samples, or shard order + buffer cut by shards")
    ap.add_argument("--shards", type=int, default=8, help="shard readers: shard files to write")
    ap.add_argument("--initial-fill", type=int, default=1024, help="shard readers: the shuffle buffer (shuffle: shards)")
    ap.add_argument("--no-index", action="store_true", help="shard readers: no index files (the reader scans)")
    ap.add_argument("--shard-dir", help="shard readers: write the shards here (default: a temporary folder)")
    ap.add_argument("--http", action="store_true", help="shard readers: read the shards over loopback HTTP")
    args = ap.parse_args()

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.share_gpu:
        os.environ["LOCAL_RANK"] = "0"  # before the YAML is read: device_id: ${LOCAL_RANK:-0}
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)

    import conveyor
    from conveyor.torch import Loader

    with tempfile.TemporaryDirectory() as tmp:
        server = made = None
        if args.reader == "file":
            file_list, n = write_file_list(args.data, tmp)
            node = FILE_READER.format(file_list=file_list)
        else:
            node, n, server, made = shard_reader_node(args, rank, dist)
        pipe = conveyor.Pipeline(HEAD.format(batch=args.batch, threads=args.threads) + node + TAIL)
        loader = Loader(pipe, output_map=["images", "labels"], reader_name="reader", last_batch_policy="fill")
        seen, batch_counts, seconds, images = [], [], 0.0, 0
        for epoch in range(args.epochs):
            labels, count = [], 0
            torch.cuda.synchronize()
            start = time.perf_counter()
            for data in loader:
                batch = data[0]
                # A copy: the yielded tensors are zero-copy views of the pipeline's slot (a CPU view
                # kept past the next batch would hold its prefetch slot).
                labels.append(batch["labels"].reshape(-1).clone())
                count += 1
            torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            seen.append(torch.cat(labels).tolist())
            batch_counts.append(count)
            if epoch == args.epochs - 1 or args.epochs == 1:
                seconds, images = elapsed, len(set(seen[-1]))  # real images; padding not counted
        pipe.close()
        dist.barrier()  # every rank is done with the shards before rank 0's server stops
        if server:
            server.stdin.close()
            server.wait()
        if made:
            shutil.rmtree(made, ignore_errors=True)

    mine = {"rank": rank, "local": local, "seen": seen, "batches": batch_counts, "seconds": seconds,
            "images": images, "device": torch.cuda.get_device_name(local)}
    gathered = [None] * world
    dist.all_gather_object(gathered, mine)
    status = 0
    if rank == 0:
        per_rank = [g["seen"] for g in gathered]
        failures = check_coverage(per_rank, n, [tuple(g["batches"]) for g in gathered])
        rates = [g["images"] / g["seconds"] if g["seconds"] > 0 else 0.0 for g in gathered]
        total = sum(rates)
        base = None
        if args.baseline and os.path.exists(args.baseline):
            with open(args.baseline) as f:
                base = json.load(f)["total_images_per_s"]
        source = "readers.file" if args.reader == "file" else "readers.%s over %d shards (shuffle: %s%s%s)" % (
            args.reader, args.shards, args.shuffle, ", scanned" if args.no_index else ", indexed",
            ", HTTP" if args.http else "")
        print("\ntorchrun_check: %d ranks, %d files, %s, batch %d, %d epochs, %s GPU%s" %
              (world, n, source, args.batch, args.epochs, "one shared" if args.share_gpu else "one per rank",
               "" if args.share_gpu else "s"))
        print("| rank | GPU | batches/epoch | images (last epoch) | seconds | images/s |")
        print("|------|-----|---------------|---------------------|---------|----------|")
        for g, r in zip(gathered, rates):
            print("| %d | %d %s | %s | %d | %.2f | %.0f |" % (g["rank"], g["local"], g["device"],
                                                            "/".join(map(str, g["batches"])), g["images"],
                                                            g["seconds"], r))
        line = "total: %.0f images/s" % total
        if base:
            line += "; 1 process: %.0f images/s; scaling %.2fx" % (base, total / base)
        print(line)
        print("coverage: " + ("OK (union = dataset, disjoint but padding, equal batch counts, "
                              "order changes per epoch)" if not failures else "FAILED"))
        for f in failures:
            print("  - " + f)
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"world": world, "reader": args.reader, "shuffle": args.shuffle, "total_images_per_s": total, "per_rank": rates,
                           "coverage_ok": not failures}, f)
        status = 1 if failures else 0
    flag = torch.tensor([status])
    dist.broadcast(flag, 0)
    dist.destroy_process_group()
    return int(flag.item())


if __name__ == "__main__":
    sys.exit(main())
