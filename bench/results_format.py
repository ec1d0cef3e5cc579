"""Formatting shared by bench/make_results.py and its section modules: a row's rate and status,
numbers, ratios and verdicts as RESULTS.md writes them."""
import os


def rate(row):
    """(median, min, max) images/s of a row, or None."""
    if not row or "error" in row or "skipped" in row:
        return None
    if "images_per_s" in row:
        return row["images_per_s"], row.get("images_per_s_min"), row.get("images_per_s_max")
    if "samples_per_s" in row:
        s = row["samples_per_s"]
        return s["median"], s["min"], s["max"]
    return None


def status(row):
    if not row:
        return "not run"
    if "error" in row:
        return "error: " + row["error"].splitlines()[0]
    if "skipped" in row:
        return "skipped: " + row["skipped"]
    return ""


def fmt(x, digits=0):
    return "—" if x is None else ("{:,.%df}" % digits).format(x)


def mem(row, key):
    """A memory figure of measure.py's, None for a row that measured nothing (skipped, failed): its
    process's reading says nothing of the library."""
    if rate(row) is None and "us_per_iteration" not in (row or {}):
        return None
    return (row or {}).get("measure", {}).get(key)


def brief(row):
    """A cell's word for a row without figures; the reason is listed under "Not measured"."""
    if not row:
        return "not run"
    return "error (below)" if "error" in row else "skipped (below)" if "skipped" in row else "—"


def verdict(ok):
    return "—" if ok is None else ("met" if ok else "**missed**")


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def read_kv(path):
    """`key: value` lines of a text file (machine.txt, timings) as a dict; {} when it is missing."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    out[key.strip()] = value.strip()
    return out
