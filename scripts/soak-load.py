#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The clients of `make soak` (scripts/soak), against one joulestat serving HTTPS with basic
auth, for DURATION seconds:
  - SCRAPERS scrapers at HZ, each on its keep-alive connection (reopened if cut), gzip,
    the right password; every scrape timed from request to the body's last byte;
  - a liveness prober: /healthz without credentials on a new connection every 250 ms, as
    the kubelet does, each allowed 1 s;
  - a guesser: a wrong password every 200 ms, every other one new (bcrypt) and the rest
    one repeated (remembered);
  - a checker: a plain scrape every second, every *_total counter compared with the last;
  - resident memory of PID every second.
The hostile connections (idle and slow) are scripts/soak's, from tests/e2e/hostile_clients.py.
Writes a JSON summary to OUT and exits 1 when a criterion fails.
  soak-load.py --port P --cafile CA --user U --password PW --pid PID --out FILE
               [--scrapers 50] [--hz 10] [--duration 300]"""
import argparse
import base64
import http.client
import json
import re
import socket
import ssl
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--cafile", required=True)
p.add_argument("--user", required=True)
p.add_argument("--password", required=True)
p.add_argument("--pid", type=int, required=True)
p.add_argument("--out", required=True)
p.add_argument("--last-scrape", required=True, help="where the last plain scrape is written")
p.add_argument("--scrapers", type=int, default=50)
p.add_argument("--hz", type=float, default=10.0)
p.add_argument("--duration", type=float, default=300.0)
a = p.parse_args()

ctx = ssl.create_default_context(cafile=a.cafile)
ctx.check_hostname = False  # the test CA names 127.0.0.1 as an IP SAN; the chain still counts
start = time.monotonic()
end = start + a.duration
lock = threading.Lock()


def auth(password):
    return "Basic " + base64.b64encode(f"{a.user}:{password}".encode()).decode()


def connect(source):
    return http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=10,
                                       source_address=(source, 0))


# Loopback sources: the server limits connections per client address (32), so the scrapers
# come from addresses of their own, 20 to an address, as scrapers of several Prometheus
# servers would; the hostile connections all come from 127.0.0.1.
def scraper_source(i):
    return "127.0.1.%d" % (1 + i // 20)


latencies = []
scrape_status = {}
odd_by_second = {}  # whole seconds since start -> answers other than 200 then
scrape_errors = 0
reconnects = 0


def scraper(i):
    global scrape_errors, reconnects
    src = scraper_source(i)
    conn = connect(src)
    period = 1.0 / a.hz
    nxt = start + (i % 10) * period / 10  # spread over the period
    mine = []
    headers = {"Authorization": auth(a.password), "Accept-Encoding": "gzip"}
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if nxt > now:
            time.sleep(nxt - now)
        nxt += period
        if nxt < time.monotonic():  # fell behind: skip, as Prometheus does
            nxt = time.monotonic() + period
        t0 = time.monotonic()
        try:
            conn.request("GET", "/metrics", headers=headers)
            r = conn.getresponse()
            r.read()
            ms = (time.monotonic() - t0) * 1000
            with lock:
                scrape_status[r.status] = scrape_status.get(r.status, 0) + 1
            if r.status == 200:
                mine.append(ms)
            else:
                with lock:
                    sec = str(int(t0 - start))
                    odd_by_second[sec] = odd_by_second.get(sec, 0) + 1
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = connect(src)
                with lock:
                    reconnects += 1
        except (OSError, http.client.HTTPException):
            with lock:
                scrape_errors += 1
                reconnects += 1
            conn.close()
            conn = connect(src)
    conn.close()
    with lock:
        latencies.extend(mine)


health = {"n": 0, "ok": 0, "max_ms": 0.0, "over_1s": 0, "failed": []}


def prober():
    while time.monotonic() < end:
        t0 = time.monotonic()
        status = None
        try:
            c = http.client.HTTPSConnection("127.0.0.1", a.port, context=ctx, timeout=1,
                                            source_address=("127.0.2.1", 0))
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            status = r.status
            c.close()
        except (OSError, http.client.HTTPException) as e:
            status = type(e).__name__
        ms = (time.monotonic() - t0) * 1000
        health["n"] += 1
        health["max_ms"] = max(health["max_ms"], ms)
        if status == 200 and ms <= 1000:
            health["ok"] += 1
        else:
            if ms > 1000:
                health["over_1s"] += 1
            if len(health["failed"]) < 20:
                health["failed"].append([round(time.monotonic() - start, 1), status, round(ms)])
        time.sleep(max(0, 0.25 - (time.monotonic() - t0)))


guesses = {"n": 0, "status": {}}


def guesser():
    conn = connect("127.0.2.2")
    k = 0
    while time.monotonic() < end:
        k += 1
        pw = "wrong-%d" % k if k % 2 else "wrong-again"
        try:
            conn.request("GET", "/metrics", headers={"Authorization": auth(pw)})
            r = conn.getresponse()
            r.read()
            st = r.status
        except (OSError, http.client.HTTPException) as e:
            st = type(e).__name__
            conn.close()
            conn = connect("127.0.2.2")
        guesses["n"] += 1
        guesses["status"][str(st)] = guesses["status"].get(str(st), 0) + 1
        time.sleep(0.2)
    conn.close()


SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*_total(?:\{.*\})?) (\S+)$")
checks = {"n": 0, "decreases": [], "series": 0}


def checker():
    conn = connect("127.0.2.3")
    last = {}
    while True:
        t0 = time.monotonic()
        final = t0 >= end
        try:
            conn.request("GET", "/metrics", headers={"Authorization": auth(a.password)})
            r = conn.getresponse()
            body = r.read().decode()
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = connect("127.0.2.3")
            continue
        if r.status == 200:
            now = {}
            for line in body.splitlines():
                m = SAMPLE.match(line)
                if m:
                    now[m.group(1)] = float(m.group(2))
            for key, v in now.items():
                if key in last and v < last[key] and len(checks["decreases"]) < 20:
                    checks["decreases"].append([key, last[key], v])
            last = now
            checks["n"] += 1
            checks["series"] = len(now)
            with open(a.last_scrape, "w") as f:
                f.write(body)
        if final:
            break
        time.sleep(max(0, 1.0 - (time.monotonic() - t0)))
    conn.close()


rss = {"first_kib": 0, "max_kib": 0, "last_kib": 0, "hwm_kib": 0}


def rss_watch():
    while time.monotonic() < end:
        try:
            with open("/proc/%d/status" % a.pid) as f:
                st = dict(line.split(":", 1) for line in f if ":" in line)
            kib = int(st["VmRSS"].split()[0])
            rss["first_kib"] = rss["first_kib"] or kib
            rss["max_kib"] = max(rss["max_kib"], kib)
            rss["last_kib"] = kib
            rss["hwm_kib"] = int(st["VmHWM"].split()[0])
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(1)


threads = [threading.Thread(target=scraper, args=(i,)) for i in range(a.scrapers)]
threads += [threading.Thread(target=f) for f in (prober, guesser, checker, rss_watch)]
for t in threads:
    t.start()
for t in threads:
    t.join()

latencies.sort()


def pct(q):
    return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1) if latencies else None


total = sum(scrape_status.values()) + scrape_errors
summary = {
    "duration_s": a.duration,
    "scrapers": a.scrapers,
    "hz": a.hz,
    "scrapes": total,
    "scrapes_ok": scrape_status.get(200, 0),
    "scrape_status": {str(k): v for k, v in sorted(scrape_status.items())},
    "scrape_errors": scrape_errors,
    "non_200_by_second": odd_by_second,
    "reconnects": reconnects,
    "scrape_ms": {"p50": pct(0.50), "p90": pct(0.90), "p99": pct(0.99),
                  "max": round(latencies[-1], 1) if latencies else None},
    "healthz": health,
    "guesses": guesses,
    "counter_checks": checks,
    "rss": rss,
}
failures = []
if health["n"] == 0 or health["ok"] != health["n"]:
    failures.append("a /healthz was not answered 200 within 1 s")
if checks["decreases"]:
    failures.append("a counter decreased")
if checks["n"] == 0:
    failures.append("no counter check")
if total == 0 or summary["scrapes_ok"] < 0.99 * total:
    failures.append("more than 1 % of the scrapes failed")
if rss["max_kib"] > 64 * 1024:
    failures.append("resident memory above the DaemonSet's 64 MiB")
summary["failures"] = failures
with open(a.out, "w") as f:
    json.dump(summary, f, indent=1)
print(json.dumps(summary, indent=1))
raise SystemExit(1 if failures else 0)
