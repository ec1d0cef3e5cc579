#!/usr/bin/python3
"""Reads tar shards back with Python's tarfile (an independent reader) for shards_command_test.

Usage: read_tar.py SHARD.tar...
Prints one line per member, in archive order: "NAME SIZE HEX" (HEX: the data, "-" when empty).
Exits non-zero when a shard is not a plain (uncompressed) tar or holds anything but regular files.
"""
import sys
import tarfile


def main():
    for path in sys.argv[1:]:
        with tarfile.open(path, mode="r:") as tar:
            for member in tar:
                if not member.isreg():
                    sys.exit("%s: member %s is not a regular file" % (path, member.name))
                data = tar.extractfile(member).read()
                print("%s %d %s" % (member.name, member.size, data.hex() or "-"))


if __name__ == "__main__":
    main()
