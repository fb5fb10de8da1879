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
    port=$(sed -n 's/^port //p' "$tmp/out" 2>/dev/null || true)
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

# TLS versions, with an openssl client that would itself go as low as TLS 1.0
# (SECLEVEL=0), so a refusal is the server's. By default only TLS 1.2 and 1.3 are served.
handshake() { # handshake PORT VERSION-FLAG: succeeds when the handshake does
    timeout 10 openssl s_client -connect "127.0.0.1:$1" "$2" -cipher 'DEFAULT:@SECLEVEL=0' \
        </dev/null >"$tmp/s_client.log" 2>&1
}
expect_versions() { # expect_versions PORT WHAT "-tls1 -tls1_1 ..." (accepted) "..." (refused)
    local v
    for v in $3; do
        handshake "$1" "$v" || { echo "FAIL: $2: $v refused"; cat "$tmp/s_client.log"; exit 1; }
    done
    for v in $4; do
        if handshake "$1" "$v"; then
            echo "FAIL: $2: $v accepted"
            exit 1
        fi
    done
    echo "ok: $2: accepted $3, refused $4"
}
expect_versions "$port" "default versions" "-tls1_2 -tls1_3" "-tls1 -tls1_1"
kill "$pid" && wait "$pid" 2>/dev/null || true
pid=

# start_server CONFIG: sets $pid and $port. The previous server's output is removed first:
# read before the new server's shell opens it, it would give the old port.
start_server() {
    rm -f "$tmp/out"
    "$serve" 127.0.0.1:0 "$1" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    port=
    for _ in $(seq 1 50); do
        port=$(sed -n 's/^port //p' "$tmp/out" 2>/dev/null || true)
        [[ -n $port ]] && break
        kill -0 "$pid" 2>/dev/null || { cat "$tmp/err"; exit 1; }
        sleep 0.1
    done
    [[ -n $port ]] || { echo "server did not report its port"; exit 1; }
}
printf 'tls_server_config:\n  cert_file: tls/cert.pem\n  key_file: tls/key.pem\n  min_version: TLS13\n' \
    >"$tmp/web13.yml"
start_server "$tmp/web13.yml"
expect_versions "$port" "min_version TLS13" "-tls1_3" "-tls1 -tls1_1 -tls1_2"
kill "$pid" && wait "$pid" 2>/dev/null || true
pid=
printf 'tls_server_config:\n  cert_file: tls/cert.pem\n  key_file: tls/key.pem\n  min_version: TLS10\n  max_version: TLS12\n' \
    >"$tmp/web10.yml"
start_server "$tmp/web10.yml"
expect_versions "$port" "TLS10 to TLS12" "-tls1 -tls1_1 -tls1_2" "-tls1_3"
kill "$pid" && wait "$pid" 2>/dev/null || true
pid=

# curve_preferences: only the groups named are agreed to.
printf 'tls_server_config:\n  cert_file: tls/cert.pem\n  key_file: tls/key.pem\n  curve_preferences: [CurveP384]\n' \
    >"$tmp/web-curves.yml"
start_server "$tmp/web-curves.yml"
timeout 10 openssl s_client -connect "127.0.0.1:$port" -groups P-384 </dev/null >"$tmp/s.log" 2>&1 ||
    { echo "FAIL: curve_preferences CurveP384: P-384 refused"; cat "$tmp/s.log"; exit 1; }
if timeout 10 openssl s_client -connect "127.0.0.1:$port" -groups X25519 </dev/null >"$tmp/s.log" 2>&1; then
    echo "FAIL: curve_preferences CurveP384: X25519 accepted"
    exit 1
fi
echo "ok: curve_preferences [CurveP384]: P-384 accepted, X25519 refused"
kill "$pid" && wait "$pid" 2>/dev/null || true
pid=

# A key of another certificate: refused at load, saying so (it was "Invalid argument").
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/tls/key.pem" 2>/dev/null
if "$serve" 127.0.0.1:0 "$tmp/web.yml" >/dev/null 2>"$tmp/err2"; then
    echo "FAIL: started with a key that does not match the certificate"
    exit 1
fi
grep -q 'web.yml:2: tls_server_config: cert_file and key_file are not a usable pair: .*do not match' "$tmp/err2" ||
    { echo "FAIL: unclear message: $(cat "$tmp/err2")"; exit 1; }
echo "ok: mismatched key refused: $(cat "$tmp/err2")"

# A key that does not parse: refused with a clear error too.
echo "not a key" >"$tmp/tls/key.pem"
if "$serve" 127.0.0.1:0 "$tmp/web.yml" >/dev/null 2>"$tmp/err2"; then
    echo "FAIL: started with a broken key"
    exit 1
fi
grep -q 'not a usable pair: key_file holds no PEM private key' "$tmp/err2" || { echo "FAIL: unclear message: $(cat "$tmp/err2")"; exit 1; }
echo "ok: broken key refused: $(cat "$tmp/err2")"
