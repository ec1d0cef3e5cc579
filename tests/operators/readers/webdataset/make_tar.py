#!/usr/bin/env python3
"""Writes a tar with Python's tarfile (a real encoder) for the webdataset tests.

usage: make_tar.py OUT.tar FORMAT MANIFEST [INDEX]
FORMAT: ustar | gnu | pax. OUT ending in .tar.gz is gzip-compressed.
MANIFEST: one member per line, "NAME<TAB>SOURCE_FILE" (archive order), or "NAME<TAB>DIR" for a
directory entry.
INDEX: also write the shard's index in DALI's wds2idx v1.2 format, from tarfile's own member offsets
(an encoder independent of ours): "v1.2 <samples>", then per sample "<ext> <offset> <size> <name>"
for each of its members (consecutive members whose names agree up to the basename's first dot).
"""
import sys
import tarfile

out, fmt, manifest = sys.argv[1:4]
formats = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}
with tarfile.open(out, "w:gz" if out.endswith(".gz") else "w", format=formats[fmt]) as tar:
    with open(manifest) as lines:
        for line in lines:
            name, source = line.rstrip("\n").split("\t")
            if source == "DIR":
                info = tarfile.TarInfo(name)
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                tar.add(source, arcname=name, recursive=False)

if len(sys.argv) > 4:
    samples = []
    with tarfile.open(out) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            base = m.name.rfind("/") + 1
            dot = m.name.find(".", base)
            key, ext = (m.name, "-") if dot < 0 else (m.name[:dot], m.name[dot + 1:])
            if not samples or samples[-1][0] != key:
                samples.append((key, []))
            samples[-1][1].append("%s %d %d %s" % (ext, m.offset_data, m.size, m.name))
    with open(sys.argv[4], "w") as index:
        index.write("v1.2 %d\n" % len(samples))
        for _, members in samples:
            index.write(" ".join(members) + "\n")
