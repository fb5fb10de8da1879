#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Encodes fixture JSON files into ListPodResourcesResponse wire bytes.

usage: encode.py OUT_DIR FIXTURE.json...   writes OUT_DIR/<name>.pb for each fixture
"""
import os
import sys

import podres_proto


def main():
    pb2, _ = podres_proto.load()
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for path in sys.argv[2:]:
        msg, _ = podres_proto.response_from_json(pb2, path)
        name = os.path.splitext(os.path.basename(path))[0]
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(msg.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main())
