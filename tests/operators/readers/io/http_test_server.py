#!/usr/bin/env python3
"""A loopback HTTP(S) file server with Range support and fault injection, for the fetch layer's tests.

Usage: http_test_server.py --root DIR [--cert CERT --key KEY] [--exit-on-stdin-eof]
Prints "PORT <n>" on its first line once it listens on 127.0.0.1 (port chosen by the system).
With --exit-on-stdin-eof it exits when its stdin closes: a test that crashes leaves no server behind.

Files under DIR are served at /<name> with GET and HEAD; `Range: bytes=a-b`, `a-` and `-n` answer 206
with Content-Range, an unsatisfiable range 416 with `Content-Range: bytes */size`.

Faults: a path /f/<spec>/<name> serves <name> with the faults of <spec>, comma-separated:
  skip=K        the faults below start after the first K requests to this path (e.g. the open's probe)
  from=B        only requests whose range starts at byte B or later count and get faults
  fail=S:N      the next N requests answer HTTP status S (N = "all": every request)
  drop=N        the next N requests send their headers and half the body, then close the connection
  stall=N       the next N requests send half the body, then stop sending for 30 s
  delay=N       the next N requests wait 30 s before answering
  cap=B         every response carries at most B bytes of the asked range (a shorter 206)
  norange       Range headers are ignored: every GET answers 200 with the whole file
Requests are counted per path; /_reset forgets the counts and the log.

Control: /_stats answers "requests=<n> bytes=<body bytes sent>" over the file requests since the last
/_reset; /_log one line per file request: "<method> <path> range=<header or -> status=<s> sent=<bytes>".
"""

import argparse
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STALL_SECONDS = 30


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}  # path -> requests seen
        self.requests = 0
        self.bytes = 0
        self.log = []

    def reset(self):
        with self.lock:
            self.counts.clear()
            self.requests = 0
            self.bytes = 0
            self.log = []

    def count(self, path):
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1
            return self.counts[path]

    def record(self, method, path, range_header, status, sent):
        with self.lock:
            self.requests += 1
            self.bytes += sent
            self.log.append(f"{method} {path} range={range_header or '-'} status={status} sent={sent}")


STATE = State()


def parse_spec(spec):
    faults = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        faults[key] = value
    return faults


def range_start(header):
    match = re.fullmatch(r"bytes=(\d+)-\d*", (header or "").strip())
    return int(match.group(1)) if match else 0


def parse_range(header, size):
    """(start, end_inclusive) for a single bytes range, "unsatisfiable", or None (no usable range)."""
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or (match.group(1) == "" and match.group(2) == ""):
        return None
    first, last = match.group(1), match.group(2)
    if first == "":  # suffix: the last n bytes
        n = int(last)
        if n == 0 or size == 0:
            return "unsatisfiable"
        return max(0, size - n), size - 1
    start = int(first)
    end = size - 1 if last == "" else min(int(last), size - 1)
    if start >= size or end < start:
        return "unsatisfiable"
    return start, end


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client's connection pool is exercised
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms stall

    def log_message(self, fmt, *args):  # quiet: the test's output stays readable
        pass

    def do_HEAD(self):
        self.serve(send_body=False)

    def do_GET(self):
        if self.path == "/_reset":
            STATE.reset()
            return self.send_text("ok")
        if self.path == "/_stats":
            with STATE.lock:
                text = f"requests={STATE.requests} bytes={STATE.bytes}"
            return self.send_text(text)
        if self.path == "/_log":
            with STATE.lock:
                text = "\n".join(STATE.log) + "\n"
            return self.send_text(text)
        self.serve(send_body=True)

    def send_text(self, text):
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # Recorded before the response goes out: a client that has its answer finds it counted.
    def count_request(self, status, sent):
        STATE.record(self.command, self.path, self.headers.get("Range"), status, sent)

    def send_empty(self, status, extra_headers=()):
        self.count_request(status, 0)
        self.send_response(status)
        for key, value in extra_headers:
            self.send_header(key, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def serve(self, send_body):
        path, faults, active = self.path, {}, False
        match = re.fullmatch(r"/f/([^/]+)(/.+)", self.path)
        if match:
            faults = parse_spec(match.group(1))
            path = match.group(2)
            if range_start(self.headers.get("Range")) >= int(faults.get("from", "0")):
                seen = STATE.count(self.path)
                skip = int(faults.get("skip", "0"))
                active = seen > skip
                nth = seen - skip  # 1 for the first request the faults apply to
        file_path = os.path.join(self.server.root, path.lstrip("/"))
        if ".." in path.split("/") or not os.path.isfile(file_path):
            return self.send_empty(404)

        if active and "fail" in faults:
            status, _, times = faults["fail"].partition(":")
            if times == "all" or nth <= int(times):
                return self.send_empty(int(status))
        if active and "delay" in faults and nth <= int(faults["delay"]):
            time.sleep(STALL_SECONDS)

        size = os.path.getsize(file_path)
        start, end, status = 0, size - 1, 200
        range_header = self.headers.get("Range")
        if range_header and "norange" not in faults:
            parsed = parse_range(range_header, size)
            if parsed == "unsatisfiable":
                return self.send_empty(416, [("Content-Range", f"bytes */{size}")])
            if parsed is not None:
                start, end = parsed
                status = 206
                if "cap" in faults:
                    end = min(end, start + int(faults["cap"]) - 1)
        count = end - start + 1

        cut = send_body and active and (("drop" in faults and nth <= int(faults["drop"])) or
                                        ("stall" in faults and nth <= int(faults["stall"])))
        to_send = 0 if not send_body else count // 2 if cut else count
        self.count_request(status, to_send)
        self.send_response(status)
        self.send_header("Content-Length", str(count))
        self.send_header("Accept-Ranges", "none" if "norange" in faults else "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if to_send > 0:
            with open(file_path, "rb") as f:  # sendfile on plain sockets, writes under TLS
                self.connection.sendfile(f, offset=start, count=to_send)
        if cut:
            if "stall" in faults:
                time.sleep(STALL_SECONDS)
            self.close_connection = True
            self.connection.shutdown(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args()
    if args.exit_on_stdin_eof:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True  # a stalled response must not keep the process alive
    server.root = args.root
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
