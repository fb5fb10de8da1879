#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile clients on loopback: IDLE connections that send nothing and SLOW ones that send a
request one byte a second, each reopened when the server cuts it, for DURATION seconds.
  hostile_clients.py PORT IDLE SLOW DURATION
Prints what it did: connections opened, and how many the server closed."""
import select
import socket
import sys
import time

port, n_idle, n_slow, duration = (int(a) for a in sys.argv[1:5])
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 4000 + b"\r\n\r\n"


def connect():
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    return s


socks = {}  # socket -> [kind, bytes sent]
opened = closed = 0
reopen = []
for kind, n in (("idle", n_idle), ("slow", n_slow)):
    for _ in range(n):
        socks[connect()] = [kind, 0]
        opened += 1
end = time.monotonic() + duration
next_drip = time.monotonic()
while time.monotonic() < end:
    ready, _, _ = select.select(list(socks), [], [], 0.2)
    for s in ready:  # readable: the server closed it (or answered, which it must not)
        kind = socks.pop(s)[0]
        s.close()
        closed += 1
        reopen.append(kind)
    # At most 100 reopened every 50 ms: steady pressure, not a CPU burn on a shared machine.
    time.sleep(0.05)
    for kind in reopen[:100]:
        socks[connect()] = [kind, 0]
        opened += 1
    del reopen[:100]
    if time.monotonic() >= next_drip:
        next_drip += 1.0
        for s, st in socks.items():
            if st[0] == "slow" and st[1] < len(REQUEST):
                try:
                    st[1] += s.send(REQUEST[st[1]:st[1] + 1])
                except OSError:
                    pass  # not connected yet, or cut: select() reports it
for s in socks:
    s.close()
print(f"hostile: {n_idle} idle + {n_slow} slow for {duration} s: "
      f"{opened} connections opened, {closed} closed by the server")
