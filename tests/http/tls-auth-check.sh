#!/usr/bin/env bash
# TLS + basic auth end to end with real clients: a self-signed certificate made here by
# openssl, a bcrypt hash made here, the server started on 127.0.0.1:0, curl as client.
set -euo pipefail
serve=$1 hashgen=$2
for tool in openssl curl; do
    command -v $tool >/dev/null || { echo "$tool not installed"; exit 1; }
done
tmp=$(mktemp -d)
pid=
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir "$tmp/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$tmp/tls/key.pem" -out "$tmp/tls/cert.pem" 2>/dev/null
hash=$("$hashgen" 'c0rrect horse')
cat >"$tmp/web.yml" <<YML
tls_server_config:
  cert_file: tls/cert.pem
  key_file: tls/key.pem
basic_auth_users:
  prometheus: '$hash'
YML

"$serve" 127.0.0.1:0 "$tmp/web.yml" >"$tmp/out" 2>"$tmp/err" &
pid=$!
port=
for _ in $(seq 1 50); do
    port=$(sed -n 's/^port //p' "$tmp/out")
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/err"; exit 1; }
    sleep 0.1
done
[[ -n $port ]] || { echo "server did not report its port"; exit 1; }
base=https://127.0.0.1:$port
c=(curl -s --max-time 10 --cacert "$tmp/tls/cert.pem")

expect() { # expect CODE DESCRIPTION curl-args...
    local want=$1 what=$2 got
    shift 2
    got=$("${c[@]}" -o "$tmp/body" -w '%{http_code}' "$@" || true)
    if [[ $got != "$want" ]]; then
        echo "FAIL: $what: HTTP $got, expected $want"
        exit 1
    fi
    echo "ok: $what ($got)"
}

expect 401 "TLS, no credentials" "$base/metrics"
grep -q Unauthorized "$tmp/body"
expect 401 "TLS, wrong password" -u prometheus:wrong "$base/metrics"
expect 401 "TLS, unknown user" -u nobody:'c0rrect horse' "$base/metrics"
expect 200 "TLS, right password" -u prometheus:'c0rrect horse' "$base/metrics"
grep -q '^joulestat_gpu_energy_joules_total{gpu="0",.*} 2071.000000$' "$tmp/body"
expect 200 "TLS, gzip round-trip" --compressed -u prometheus:'c0rrect horse' "$base/metrics"
grep -q '^joulestat_series ' "$tmp/body"
hdr=$("${c[@]}" -D - -o /dev/null --compressed -u prometheus:'c0rrect horse' "$base/metrics")
grep -qi '^content-encoding: gzip' <<<"$hdr" || { echo "FAIL: no gzip"; exit 1; }
expect 200 "TLS, healthz" -u prometheus:'c0rrect horse' "$base/healthz"
expect 200 "TLS, healthz without credentials" "$base/healthz"

# Without the CA the certificate is refused; plain HTTP on the TLS port gets no answer.
if curl -s --max-time 5 -o /dev/null "$base/metrics"; then
    echo "FAIL: an unknown self-signed certificate was accepted"
    exit 1
fi
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics" || true)
[[ $code == 000 ]] || { echo "FAIL: plain HTTP got $code from the TLS port"; exit 1; }
echo "ok: certificate checked, plain HTTP refused"

# A key that does not parse: the server refuses to start with a clear error.
echo "not a key" >"$tmp/tls/key.pem"
if "$serve" 127.0.0.1:0 "$tmp/web.yml" >/dev/null 2>"$tmp/err2"; then
    echo "FAIL: started with a broken key"
    exit 1
fi
grep -q 'start: Invalid argument' "$tmp/err2"
echo "ok: broken key refused"
