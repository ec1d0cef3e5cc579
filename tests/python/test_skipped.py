"""Pipeline.skipped_files(): the files a decoder with on_error: skip dropped (docs/decoding_cpu.md),
on real PNGs written here (zlib + CRC, no imaging library needed) with a truncated one."""
import struct
import zlib

import pytest

try:
    import conveyor
except Exception as e:  # the library is not built or not found
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)


def png(width, height, seed):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes((x * 7 + y * 13 + seed) % 256 for x in range(width * 3)) for y in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_skipped_files_lists_the_truncated_png(tmp_path):
    (tmp_path / "cls").mkdir()
    for i in range(5):
        data = png(8 + i, 6, i)
        (tmp_path / "cls" / ("%d.png" % i)).write_bytes(data[: len(data) // 2] if i == 3 else data)
    yaml = (
        "pipeline: {name: skipped, batch_size: 4, device: cpu, num_threads: 1, prefetch_depth: 1}\n"
        "ops:\n"
        "  - {op: readers.file, name: reader, args: {file_root: \"%s\"}, outputs: [pngs, labels]}\n"
        "  - {op: decoders.image, name: decode, inputs: [pngs], args: {on_error: skip}, outputs: [images]}\n"
        "outputs: [images, labels]\n" % tmp_path
    )
    with conveyor.Pipeline(yaml) as pipe:
        pipe.build()
        out = pipe.outputs(samples=True)
        assert len(out["images"]) == 4  # refilled: the fifth file took the truncated one's place
        skipped = pipe.skipped_files()
    assert len(skipped) == 1
    node, path, times, reason = skipped[0]
    assert (node, path, times) == ("reader", str(tmp_path / "cls" / "3.png"), 1)
    assert reason.startswith("truncated PNG data: the file ends after ")
