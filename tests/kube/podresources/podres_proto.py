# SPDX-License-Identifier: MIT
"""Compiles src/kube/pod_resources.proto (the one joulestat builds its decoder from) with
grpc_tools.protoc into a temporary directory and imports it.

Used by the fixture encoder and the gRPC peer, so both speak the real protobuf and gRPC
stacks (Debian python3-grpcio / python3-grpc-tools; run with /usr/bin/python3).
"""
import atexit
import importlib
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "..", "src", "kube")


def load():
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="podres-stubs-")
    atexit.register(shutil.rmtree, out, True)
    rc = protoc.main(["protoc", "-I" + PROTO_DIR, "--python_out=" + out,
                      "--grpc_python_out=" + out, os.path.join(PROTO_DIR, "pod_resources.proto")])
    if rc != 0:
        raise RuntimeError("protoc failed with %d" % rc)
    sys.path.insert(0, out)
    return (importlib.import_module("pod_resources_pb2"),
            importlib.import_module("pod_resources_pb2_grpc"))


def response_from_json(pb2, path):
    """A ListPodResourcesResponse from a fixture in the protobuf JSON mapping.

    Keys starting with '_' are test controls (see peer.py) and are not part of the message.
    """
    import json
    from google.protobuf import json_format

    with open(path) as f:
        doc = json.load(f)
    msg = {k: v for k, v in doc.items() if not k.startswith("_")}
    return json_format.ParseDict(msg, pb2.ListPodResourcesResponse()), doc
