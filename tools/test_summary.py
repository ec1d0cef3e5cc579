#!/usr/bin/env python3
"""Counts gtest/pytest cases in JUnit XML files and prints `N passed, M failed, K skipped`.

Usage: test_summary.py [--per-file] [--extra-failed N] XML_OR_DIR...   Exit status 1 when any case failed or no case ran.

A Bazel test.xml whose test.log beside it holds a sanitizer report (an ASan/LSan/UBSan ERROR or a TSan
warning printed at exit, after every case passed) counts one more failure: the binary exited non-zero
and Bazel failed the target, though the XML shows no failed case.
"""
import os
import sys
import xml.etree.ElementTree as ET


def cases(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print(f"{path}: unreadable XML ({e}); counted as one failure", file=sys.stderr)
        yield "failed"
        return
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            yield "failed"
        elif case.find("skipped") is not None or case.get("result") == "skipped" or case.get("status") == "notrun":
            yield "skipped"
        else:
            yield "passed"


SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
                     "runtime error:")


def sanitizer_report(xml_path):
    """The first sanitizer report line of the test.log beside a Bazel test.xml, or None."""
    log = os.path.join(os.path.dirname(xml_path), "test.log")
    if os.path.basename(xml_path) != "test.xml" or not os.path.exists(log):
        return None
    with open(log, errors="replace") as f:
        for line in f:
            if any(r in line for r in SANITIZER_REPORTS):
                return line.strip()
    return None


def main(argv):
    per_file = "--per-file" in argv
    extra_failed = 0
    if "--extra-failed" in argv:
        i = argv.index("--extra-failed")
        extra_failed = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    paths = []
    for arg in (a for a in argv if a != "--per-file"):
        if os.path.isdir(arg):
            for d, _, files in os.walk(arg):
                paths += [os.path.join(d, f) for f in files if f.endswith(".xml")]
        elif os.path.exists(arg):
            paths.append(arg)
    total = {"passed": 0, "failed": extra_failed, "skipped": 0}
    for path in sorted(paths):
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for result in cases(path):
            counts[result] += 1
        report = sanitizer_report(path)
        if report and not counts["failed"]:
            print(f"{path}: the cases passed but the log has a sanitizer report ({report}); counted as one failure",
                  file=sys.stderr)
            counts["failed"] += 1
        for k in total:
            total[k] += counts[k]
        if per_file:
            print(f"  {os.path.relpath(path):70s} {counts['passed']:4d} passed {counts['failed']:3d} failed "
                  f"{counts['skipped']:3d} skipped")
    print(f"{total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return 1 if total["failed"] or not sum(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
