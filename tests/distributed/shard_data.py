"""The data sets of torchrun_check.py's shard runs (issue 36): a folder's JPEGs written as WebDataset
tar shards or TFRecord files (with their index files), every image labelled with its own index so
that a label names a sample, and the reader node of each kind that reads them back.

Standard library only (torchrun machines need not have protobuf): tars by `tarfile`, Examples
encoded by hand (TensorFlow's field numbers; readers.tfrecord parses them with protobuf and checks
both CRC32Cs, so a wrong encoding fails the run), CRC32C from `crc32c` / `google_crc32c` when
installed, else a table (slow: ~10 MB/s).

    files = jpeg_files(data)                       # sorted; label i is files[i]
    paths, index_paths = write_shards("webdataset", files, out_dir, shards=8)
    node = reader_node("webdataset", paths, index_paths, shuffle="samples")   # YAML text
"""
import io
import os
import struct
import tarfile

READERS = ("file", "webdataset", "tfrecord")


def jpeg_files(data):
    """Every .jpg / .jpeg under `data`, sorted."""
    return sorted(os.path.join(root, f) for root, _, names in os.walk(data) for f in names
                  if f.lower().endswith((".jpg", ".jpeg")))


def _split(n, shards):
    """[begin, end) of each of `shards` contiguous, near-equal parts of n items (none empty)."""
    shards = max(1, min(shards, n))
    return [(s * n // shards, (s + 1) * n // shards) for s in range(shards)]


def write_webdataset(files, out_dir, shards):
    """train-<s>.tar: sample i is key "<i:06d>" with members .jpg (the file) and .cls (i as a
    little-endian int32); train-<s>.tar.idx: its wds2idx v1.2 index. Returns (paths, index_paths)."""
    paths, index_paths = [], []
    for s, (begin, end) in enumerate(_split(len(files), shards)):
        path = os.path.join(out_dir, "train-%05d.tar" % s)
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(begin, end):
                with open(files[i], "rb") as f:
                    jpeg = f.read()
                for ext, data in (("jpg", jpeg), ("cls", struct.pack("<i", i))):
                    info = tarfile.TarInfo("%06d.%s" % (i, ext))
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        lines = []
        with tarfile.open(path, "r") as tar:
            members = tar.getmembers()
        for k in range(0, len(members), 2):
            lines.append(" ".join("%s %d %d %s" % (m.name.split(".", 1)[1], m.offset_data, m.size, m.name)
                                  for m in members[k:k + 2]))
        with open(path + ".idx", "w") as f:
            f.write("v1.2 %d\n%s\n" % (len(lines), "\n".join(lines)))
        paths.append(path)
        index_paths.append(path + ".idx")
    return paths, index_paths


def _varint(v):
    out = bytearray()
    while True:
        low, v = v & 0x7F, v >> 7
        out.append(low | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(number, payload):
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_example(jpeg, label):
    """tf.train.Example {image/encoded: bytes, image/class/label: int64} (label >= 0)."""
    encoded = _field(1, _field(1, jpeg))            # Feature.bytes_list -> BytesList.value
    labelled = _field(3, _field(1, _varint(label)))  # Feature.int64_list -> Int64List.value (packed)
    entries = (_field(1, _field(1, b"image/encoded") + _field(2, encoded)) +
               _field(1, _field(1, b"image/class/label") + _field(2, labelled)))
    return _field(1, entries)                        # Example.features -> Features.feature (map)


def _crc32c_function():
    try:
        import crc32c
        return crc32c.crc32c
    except ImportError:
        pass
    try:
        import google_crc32c
        return lambda data: google_crc32c.value(bytes(data))
    except ImportError:
        pass
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)

    def crc32c_table(data):
        crc = 0xFFFFFFFF
        for b in data:
            crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
        return crc ^ 0xFFFFFFFF
    return crc32c_table


_CRC32C = None


def _masked_crc(data):
    global _CRC32C
    if _CRC32C is None:
        _CRC32C = _crc32c_function()
    crc = _CRC32C(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def write_tfrecord(files, out_dir, shards):
    """train-<s>.tfrecord: record i is encode_example(file i, i); train-<s>.tfrecord.idx: its
    tfrecord2idx index ("offset size" per record). Returns (paths, index_paths)."""
    paths, index_paths = [], []
    for s, (begin, end) in enumerate(_split(len(files), shards)):
        path = os.path.join(out_dir, "train-%05d.tfrecord" % s)
        spans = []
        with open(path, "wb") as out:
            for i in range(begin, end):
                with open(files[i], "rb") as f:
                    data = encode_example(f.read(), i)
                length = struct.pack("<Q", len(data))
                record = length + struct.pack("<I", _masked_crc(length)) + data + struct.pack("<I", _masked_crc(data))
                spans.append((out.tell(), len(record)))
                out.write(record)
        with open(path + ".idx", "w") as f:
            f.write("".join("%d %d\n" % span for span in spans))
        paths.append(path)
        index_paths.append(path + ".idx")
    return paths, index_paths


def write_shards(reader, files, out_dir, shards):
    """The shards of `reader` ("webdataset" or "tfrecord") in out_dir: (paths, index_paths)."""
    if reader == "webdataset":
        return write_webdataset(files, out_dir, shards)
    if reader == "tfrecord":
        return write_tfrecord(files, out_dir, shards)
    raise ValueError("write_shards: expected webdataset or tfrecord, got %r" % reader)


def _yaml_list(items):
    return "[" + ", ".join('"%s"' % i for i in items) + "]"


def reader_node(reader, paths, index_paths, shuffle="samples", initial_fill=1024, extra=""):
    """The `reader` node (outputs [jpegs, labels]) over the shards, sharded by RANK / WORLD_SIZE
    with random_shuffle and pad_last_batch. index_paths None: scanned at build. `extra`: more
    arguments ("http_max_retries: 0")."""
    args = ["paths: " + _yaml_list(paths) if reader == "webdataset" else "path: " + _yaml_list(paths)]
    if index_paths:
        args.append(("index_paths: " if reader == "webdataset" else "index_path: ") + _yaml_list(index_paths))
    if reader == "webdataset":
        args.append("ext: [jpg, cls], dtypes: [uint8, int32]")
    elif reader == "tfrecord":
        args.append('features: ["image/encoded: bytes", "image/class/label: int64[1] = -1"]')
    else:
        raise ValueError("reader_node: expected webdataset or tfrecord, got %r" % reader)
    args.append("random_shuffle: true, shuffle: %s, initial_fill: %d, pad_last_batch: true" % (shuffle, initial_fill))
    args.append('shard_id: "${RANK:-0}", num_shards: "${WORLD_SIZE:-1}"')
    if extra:
        args.append(extra)
    return ("  - op: readers.%s\n    name: reader\n    args: {%s}\n    outputs: [jpegs, labels]\n" %
            (reader, ",\n           ".join(args)))
