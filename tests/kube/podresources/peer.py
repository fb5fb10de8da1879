#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A kubelet pod-resources peer on the real gRPC stack (grpcio), for tests.

usage: peer.py SOCKET FIXTURE.json [READY_FILE]

Serves v1.PodResourcesLister/List on the unix socket SOCKET. Every call re-reads FIXTURE,
so a test changes the answer by rewriting the file. Test controls in the fixture:
  "_grpc_status": N, "_grpc_message": "..."   answer with that status instead
  "_delay_seconds": S                         sleep before answering
READY_FILE is created once the server listens. SIGTERM stops it.
"""
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

import podres_proto

pb2, pb2_grpc = podres_proto.load()


class Lister(pb2_grpc.PodResourcesListerServicer):
    def __init__(self, fixture):
        self.fixture = fixture
        self.calls = 0

    def List(self, request, context):
        self.calls += 1
        msg, doc = podres_proto.response_from_json(pb2, self.fixture)
        if doc.get("_delay_seconds"):
            time.sleep(float(doc["_delay_seconds"]))
        status = int(doc.get("_grpc_status", 0))
        if status:
            code = next(c for c in grpc.StatusCode if c.value[0] == status)
            context.abort(code, doc.get("_grpc_message", ""))
        return msg


def main():
    sock, fixture = sys.argv[1], sys.argv[2]
    ready = sys.argv[3] if len(sys.argv) > 3 else None
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb2_grpc.add_PodResourcesListerServicer_to_server(Lister(fixture), server)
    if server.add_insecure_port("unix:" + sock) == 0:
        print("peer: cannot listen on " + sock, file=sys.stderr)
        return 1
    server.start()
    if ready:
        with open(ready, "w") as f:
            f.write(str(os.getpid()))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    # Wait with a timeout: a signal that lands on one of grpc's own threads only sets
    # Python's flag, and an untimed wait in the main thread would never see it.
    while not stop.wait(0.2):
        pass
    server.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
