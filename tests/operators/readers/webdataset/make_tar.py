#!/usr/bin/env python3
"""Writes a tar with Python's tarfile (a real encoder) for the webdataset tests.

usage: make_tar.py OUT.tar FORMAT MANIFEST
FORMAT: ustar | gnu | pax. OUT ending in .tar.gz is gzip-compressed.
MANIFEST: one member per line, "NAME<TAB>SOURCE_FILE" (archive order), or "NAME<TAB>DIR" for a
directory entry.
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
