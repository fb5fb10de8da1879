#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small Kubernetes API server for tests and the demo: GET /api/v1/pods with a nodeName
field selector, as a LIST (PodList) or a WATCH (chunked, one JSON event per line,
bookmarks every --bookmark-interval, 410 for resource versions it does not know), over
HTTPS (--cert, --key) or plain HTTP, with a bearer-token check.

It is driven through a control file: each line appended to it is a JSON command,
  {"op": "add", "file": "pod.json"}   ADDED (or MODIFIED when the UID is known)
  {"op": "delete", "uid": "..."}      DELETED
  {"op": "expire"}                    every open watch gets ERROR 410 (history dropped)
  {"op": "garbage"}                   an event no client can read (a 300-character name),
                                      kept in the history like any other
  {"op": "huge"}                      a MODIFIED event of a known pod with a 17 MiB annotation
                                      (over a client's 16 MiB line), in the history only
  {"op": "gone", "on": true}          every watch gets ERROR 410 at once (false: no more)
  {"op": "refuse", "count": N}        the next N watches get HTTP 504 "Too large resource
                                      version" (an API server whose cache lags after an etcd
                                      restore), with a terminal escape; LISTs are answered
  {"op": "close"}                     every open watch ends, as a server's timeout ends it
The current pods are written to --state after each change, so a restarted server
(--pods STATE --rv-start N) continues where this one stopped. SIGTERM ends it at once,
dropping open connections, as a crashed API server would."""
import argparse
import json
import os
import signal
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, pods, node, rv_start, state_path):
        self.cond = threading.Condition()
        self.node = node
        self.rv = rv_start
        self.floor = rv_start  # oldest version a watch may resume from
        self.pods = {}
        self.history = []  # (rv, type, pod)
        self.epoch = 0  # bumped by "expire"
        self.refuse = 0  # watches left to refuse
        self.always_gone = False  # every watch answered 410 at once
        self.closes = 0  # bumped by "close"
        self.state_path = state_path
        for p in pods:
            self._stamp(p)
            self.pods[p["metadata"]["uid"]] = p
        self._save()

    def _stamp(self, pod):
        self.rv += 1
        pod["metadata"]["resourceVersion"] = str(self.rv)
        pod.setdefault("spec", {})["nodeName"] = self.node
        return self.rv

    def _save(self):
        if not self.state_path:
            return
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(list(self.pods.values()), f)
        os.replace(tmp, self.state_path)

    def apply(self, cmd):
        with self.cond:
            op = cmd["op"]
            if op == "add":
                with open(cmd["file"]) as f:
                    pod = json.load(f)
                kind = "MODIFIED" if pod["metadata"]["uid"] in self.pods else "ADDED"
                rv = self._stamp(pod)
                self.pods[pod["metadata"]["uid"]] = pod
                self.history.append((rv, kind, pod))
            elif op == "delete":
                pod = self.pods.pop(cmd["uid"])
                rv = self._stamp(pod)
                self.history.append((rv, "DELETED", pod))
            elif op == "garbage":
                self.rv += 1
                self.history.append((self.rv, "GARBAGE", None))
            elif op == "huge":
                self.rv += 1
                self.history.append((self.rv, "HUGE", None))
            elif op == "gone":
                self.always_gone = bool(cmd["on"])
            elif op == "refuse":
                self.refuse = int(cmd["count"])
            elif op == "close":
                self.closes += 1
            elif op == "expire":
                self.epoch += 1
                self.history.clear()
                self.floor = self.rv
            else:
                raise ValueError(op)
            self._save()
            self.cond.notify_all()


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


def make_handler(state, token_file, log):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def note(self, what):
            with open(log, "a") as f:
                f.write(f"{time.time():.3f} {what} {self.path}\n")

        def send_json(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def chunk(self, obj):
            data = (json.dumps(obj) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(url.query))
            with open(token_file) as f:
                token = f.read().strip()
            if self.headers.get("Authorization") != "Bearer " + token:
                self.note("401")
                return self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
            if url.path != "/api/v1/pods":
                self.note("404")
                return self.send_json(404, status(404, "NotFound", "the server could not find "
                                                  "the requested resource"))
            if q.get("fieldSelector") != "spec.nodeName=" + state.node:
                self.note("400")
                return self.send_json(400, status(400, "BadRequest", "wrong field selector"))
            if q.get("watch") in ("1", "true"):
                return self.watch(q)
            with state.cond:
                items = list(state.pods.values())
                rv = state.rv
            self.note(f"LIST pods={len(items)} rv={rv}")
            self.send_json(200, {"kind": "PodList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": str(rv)}, "items": items})

        def watch(self, q):
            try:
                since = int(q.get("resourceVersion", ""))
            except ValueError:
                since = -1
            with state.cond:
                refused = state.refuse > 0
                state.refuse -= 1 if refused else 0
            if refused:
                self.note(f"WATCH rv={since} refused")
                # with a terminal escape, as a hostile or broken server might send
                return self.send_json(504, status(504, "Timeout",
                                                  f"Too large resource version: {since}"
                                                  "\u001b]0;owned\u0007"))
            timeout = min(int(q.get("timeoutSeconds", "300")), 300)
            deadline = time.monotonic() + timeout
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            with state.cond:
                epoch, closes = state.epoch, state.closes
                gone = since < state.floor or since > state.rv or state.always_gone
            self.note(f"WATCH rv={since} gone={int(gone)}")
            if gone:
                self.chunk({"type": "ERROR", "object": status(
                    410, "Expired", f"too old resource version: {since} ({state.floor})")})
                return self.end_stream()
            sent = since
            last_bookmark = time.monotonic()
            while time.monotonic() < deadline:
                with state.cond:
                    if state.closes != closes:
                        break
                    if state.epoch != epoch:
                        pending, expired = [], True
                    else:
                        pending = [h for h in state.history if h[0] > sent]
                        expired = False
                        if not pending:
                            state.cond.wait(0.5)
                            pending = [h for h in state.history if h[0] > sent]
                    current = state.rv
                if expired:
                    self.chunk({"type": "ERROR", "object": status(
                        410, "Expired", "too old resource version")})
                    return self.end_stream()
                for rv, kind, pod in pending:
                    if kind == "HUGE" and state.pods:
                        obj = json.loads(json.dumps(next(iter(state.pods.values()))))
                        obj["metadata"]["resourceVersion"] = str(rv)
                        obj["metadata"].setdefault("annotations", {})["blob"] = "x" * (17 << 20)
                        self.chunk({"type": "MODIFIED", "object": obj})
                        sent = rv
                        continue
                    if kind == "GARBAGE":
                        self.chunk({"type": "ADDED", "object": {"kind": "Pod", "metadata": {
                            "name": "x" * 300, "namespace": "ml", "uid": "garbage",
                            "resourceVersion": str(rv)}}})
                        sent = rv
                        continue
                    obj = json.loads(json.dumps(pod))
                    obj["metadata"]["resourceVersion"] = str(rv)
                    self.chunk({"type": kind, "object": obj})
                    sent = rv
                if time.monotonic() - last_bookmark > state.bookmark_s:
                    self.chunk({"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1",
                                "metadata": {"resourceVersion": str(current)}}})
                    sent = max(sent, current)
                    last_bookmark = time.monotonic()
            self.end_stream()

        def end_stream(self):
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cert", help="serve HTTPS with this certificate (default: plain HTTP)")
    ap.add_argument("--key")
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--pods", required=True, help="PodList JSON, or a JSON array of pods")
    ap.add_argument("--add", action="append", default=[], help="more pod files")
    ap.add_argument("--node", default="node-a")
    ap.add_argument("--control", default=os.devnull)
    ap.add_argument("--state")
    ap.add_argument("--log", default=os.devnull)
    ap.add_argument("--rv-start", type=int, default=48000)
    ap.add_argument("--bookmark-interval", type=float, default=2.0,
                    help="seconds between BOOKMARK events of an open watch (a real API "
                         "server's are about a minute apart)")
    a = ap.parse_args()

    with open(a.pods) as f:
        doc = json.load(f)
    pods = doc["items"] if isinstance(doc, dict) else doc
    for extra in a.add:
        with open(extra) as f:
            pods.append(json.load(f))
    state = State(pods, a.node, a.rv_start, a.state)
    state.bookmark_s = a.bookmark_interval
    # a restarted server must not replay the previous one's commands
    offset_start = os.path.getsize(a.control) if os.path.exists(a.control) else 0

    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(state, a.token_file, a.log))
    server.daemon_threads = True
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)

    def follow():
        nonlocal offset_start
        path = a.control
        offset = offset_start
        while True:
            time.sleep(0.1)
            try:
                with open(path) as f:
                    f.seek(offset)
                    data = f.read()
            except FileNotFoundError:
                continue
            for line in data.split("\n")[:-1]:
                offset += len(line) + 1
                if line.strip():
                    state.apply(json.loads(line))

    threading.Thread(target=follow, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(a.log, "a") as f:
        f.write(f"{time.time():.3f} START rv={state.rv} pods={len(state.pods)}\n")
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
