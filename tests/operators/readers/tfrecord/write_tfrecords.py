#!/usr/bin/python3
"""Writes TFRecord files of tf.train.Example records from a plan, for readers.tfrecord's tests.

An independent encoder: the Example messages are declared here (TensorFlow's documented field
numbers, built as a FileDescriptorProto, not from our .proto) and serialized by protobuf's Python
runtime; the framing's CRC32C is a table built bit by bit from the polynomial's definition. It
also writes each file's index the way DALI's tfrecord2idx does ("offset size" per record).

Plan (stdin or a file), one directive per line; the C++ test writes it with fresh random values:
  file PATH            start a TFRecord file (its index goes to PATH.idx)
  record               start an Example in the current file
  bytes NAME HEX...    a bytes_list feature (each value hex-encoded; "-" is the empty value)
  int64 NAME V...      an int64_list feature
  float NAME V...      a float_list feature (values rounded to float32 by protobuf)
  nokind NAME          a Feature with no list set
  raw HEX              a record whose data is these bytes (not an Example)
Usage: write_tfrecords.py PLAN
       write_tfrecords.py --dump FILE   (reads FILE back: checks every record's two CRC32Cs, parses
                                         its Example and prints one line per record, features by
                                         name: "name kind value...", bytes and float32 bits in hex,
                                         "-" for an empty value, features joined by " | ")
"""
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

POLY = 0x82F63B78  # CRC32C (Castagnoli), reflected


def _table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (POLY if crc & 1 else 0)
        table.append(crc)
    return table


TABLE = _table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked(crc32c(length))) + data +
            struct.pack("<I", masked(crc32c(data))))


def example_class():
    f = descriptor_pb2.FileDescriptorProto(name="test_example.proto", package="testtf", syntax="proto3")
    L = descriptor_pb2.FieldDescriptorProto
    for name, ftype in (("BytesList", L.TYPE_BYTES), ("FloatList", L.TYPE_FLOAT), ("Int64List", L.TYPE_INT64)):
        m = f.message_type.add(name=name)
        m.field.add(name="value", number=1, type=ftype, label=L.LABEL_REPEATED)
    feature = f.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (fname, tname) in enumerate(
            (("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List")), start=1):
        feature.field.add(name=fname, number=number, type=L.TYPE_MESSAGE, type_name=".testtf." + tname,
                          label=L.LABEL_OPTIONAL, oneof_index=0)
    features = f.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=L.TYPE_STRING, label=L.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=L.TYPE_MESSAGE, type_name=".testtf.Feature", label=L.LABEL_OPTIONAL)
    features.field.add(name="feature", number=1, type=L.TYPE_MESSAGE, type_name=".testtf.Features.FeatureEntry",
                       label=L.LABEL_REPEATED)
    example = f.message_type.add(name="Example")
    example.field.add(name="features", number=1, type=L.TYPE_MESSAGE, type_name=".testtf.Features",
                      label=L.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("testtf.Example"))


def dump(path):
    Example = example_class()
    data = open(path, "rb").read()
    offset, index = 0, 0
    while offset < len(data):
        length_bytes = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (length_crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        if masked(crc32c(length_bytes)) != length_crc:
            sys.exit("record %d: bad length CRC" % index)
        body = data[offset + 12:offset + 12 + length]
        (data_crc,) = struct.unpack("<I", data[offset + 12 + length:offset + 16 + length])
        if len(body) != length or masked(crc32c(body)) != data_crc:
            sys.exit("record %d: bad data CRC or truncated" % index)
        example = Example()
        example.ParseFromString(body)
        parts = []
        for name in sorted(example.features.feature):
            f = example.features.feature[name]
            kind = f.WhichOneof("kind")
            if kind == "bytes_list":
                values = [v.hex() or "-" for v in f.bytes_list.value]
            elif kind == "int64_list":
                values = [str(v) for v in f.int64_list.value]
            else:
                values = [struct.pack("<f", v).hex() for v in f.float_list.value]  # float32 bits
            parts.append(" ".join([name, kind or "none"] + values))
        print(" | ".join(parts))
        offset += length + 16
        index += 1


def main():
    if sys.argv[1] == "--dump":
        return dump(sys.argv[2])
    Example = example_class()
    files = []  # [path, [record bytes]]
    current = None
    with open(sys.argv[1]) as plan:
        for line in plan:
            words = line.split()
            if not words:
                continue
            op, args = words[0], words[1:]
            if op == "file":
                files.append([args[0], []])
            elif op == "record":
                current = Example()
                files[-1][1].append(current)
            elif op == "raw":
                files[-1][1].append(bytes.fromhex(args[0]) if args else b"")
            elif op == "bytes":
                current.features.feature[args[0]].bytes_list.value.extend(
                    b"" if v == "-" else bytes.fromhex(v) for v in args[1:])
            elif op == "int64":
                current.features.feature[args[0]].int64_list.value.extend(int(v) for v in args[1:])
            elif op == "float":
                current.features.feature[args[0]].float_list.value.extend(float(v) for v in args[1:])
            elif op == "nokind":
                current.features.feature[args[0]].SetInParent()
            else:
                sys.exit("write_tfrecords.py: unknown directive %r" % op)
    for path, records in files:
        offset = 0
        with open(path, "wb") as out, open(path + ".idx", "w") as idx:
            for r in records:
                data = r if isinstance(r, bytes) else r.SerializeToString()
                framed = frame(data)
                out.write(framed)
                idx.write("%d %d\n" % (offset, len(framed)))
                offset += len(framed)


if __name__ == "__main__":
    main()
