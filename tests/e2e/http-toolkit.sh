#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# exporter-toolkit's own web-config test files (tests/http/toolkit: the configurations of its
# web/testdata, under their names there; the certificates are made here with openssl):
#   - every file its tests treat as valid starts joulestat, and serves as its tests expect
#     (TLS, ciphers and curves agreed or not, client certificates accepted or the handshake
#     failing, security headers, rate limits, basic auth with its bcrypt hashes);
#   - every file it refuses is refused: joulestat exits 1 with a message naming the file,
#     the line and the key.
# Usage: http-toolkit.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
d=$E2E_TMP
cp "$src"/tests/http/toolkit/* "$d/"

# The names its files use: a CA (tls-ca-chain.pem) and the server certificate it signed for
# localhost, two self-signed client certificates (client2's SANs include test3), and a
# "CA file" whose certificate is not base64.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/tls-ca-chain.pem" \
    -subj "/O=Test/CN=toolkit test CA" -days 2 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$d/server.key" -out "$d/server.csr" \
    -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/server.ext"
openssl x509 -req -in "$d/server.csr" -CA "$d/tls-ca-chain.pem" -CAkey "$d/ca.key" \
    -CAcreateserial -out "$d/server.crt" -days 2 -extfile "$d/server.ext" 2>/dev/null
selfsigned() { # selfsigned NAME CN [SANS]
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$1.key" \
        -out "$d/$1.pem" -subj "/CN=$2" -days 2 -addext extendedKeyUsage=clientAuth \
        ${3:+-addext "subjectAltName=$3"} 2>/dev/null
}
selfsigned client_selfsigned test
selfsigned client2_selfsigned test2 "DNS:test3,DNS:example.test"
printf -- '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n' \
    >"$d/tls-ca-chain-invalid.pem"
# Inline PEM: the files hold @SERVER_CRT@ / @SERVER_KEY@ where the text goes (indented).
for f in "$d"/*.yml; do
    grep -q '@SERVER_' "$f" || continue
    python3 - "$f" "$d/server.crt" "$d/server.key" <<'EOF'
import sys
path, crt, key = sys.argv[1:]
text = open(path).read()
for mark, pem in (("@SERVER_CRT@", crt), ("@SERVER_KEY@", key)):
    text = text.replace(mark, open(pem).read().strip().replace("\n", "\n    "))
open(path, "w").write(text)
EOF
done

pid=
base=
serve() { # serve FILE: joulestat with it, listening and sampled (fails the test otherwise)
    local port
    port=$(e2e_free_port)
    "$build/joulestat" serve --no-gpu --rapl-source off --listen-address "127.0.0.1:$port" \
        --web.config.file "$d/$1" >"$d/joulestat.log" 2>&1 &
    pid=$!
    E2E_PIDS+=("$pid")
    base=127.0.0.1:$port
    e2e_wait 10 grep -q "listening on" "$d/joulestat.log" ||
        e2e_fail "$1 did not start: $(tail -3 "$d/joulestat.log")"
    e2e_wait 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" || e2e_fail "$1: nothing listens"
}
stop() {
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
# get [CURL OPTIONS] URL: prints the HTTP code (000: no answer); never fails.
get() {
    curl -s -S -o "$d/body" -D "$d/headers" --max-time 10 -w '%{http_code}' "$@" 2>"$d/curl.err" ||
        true
}
tls() { # tls [CURL OPTIONS]: GET /metrics over TLS, trusting the test CA
    get --cacert "$d/tls-ca-chain.pem" "$@" "https://localhost:${base#*:}/metrics" \
        --resolve "localhost:${base#*:}:127.0.0.1"
}
client() { echo --cert "$d/$1.pem" --key "$d/$1.key"; }
expect() { # expect WANT GOT WHAT
    [[ $2 == "$1" ]] || e2e_fail "$3: HTTP $2, expected $1 ($(cat "$d/curl.err"))"
    echo "ok: $3 ($2)"
}

# Its valid files, each with what its tests check of it.
serve web_config_empty.yml
expect 200 "$(get "http://$base/metrics")" "web_config_empty.yml: plain HTTP"
stop

serve web_config_noAuth.good.yml
expect 200 "$(tls)" "web_config_noAuth.good.yml: TLS"
expect 000 "$(get "http://$base/metrics")" "web_config_noAuth.good.yml: plain HTTP to HTTPS"
stop

# Its reload test: the blocking file refuses a client without a certificate; once it holds
# the good file's text (and SIGHUP), the next connection's handshake goes through.
serve web_config_noAuth.good.blocking.yml
expect 000 "$(tls)" "web_config_noAuth.good.blocking.yml: no client certificate"
cp "$d/web_config_noAuth.good.yml" "$d/web_config_noAuth.good.blocking.yml"
kill -HUP "$pid"
e2e_wait 10 grep -q "SIGHUP: reloaded" "$d/joulestat.log" || e2e_fail "no reload after SIGHUP"
expect 200 "$(tls)" "web_config_noAuth.good.blocking.yml: after the good file's text and SIGHUP"
stop

for f in web_config_noAuth_tlsInline.good.yml web_config_noAuth_allCiphers.good.yml \
    web_config_noAuth_allCurves.good.yml; do
    serve $f
    expect 200 "$(tls)" "$f: TLS"
    stop
done

serve web_config_noAuth_someCiphers.good.yml
expect 200 "$(tls --ciphers ECDHE-RSA-AES128-GCM-SHA256)" \
    "web_config_noAuth_someCiphers.good.yml: a listed suite"
expect 000 "$(tls --ciphers ECDHE-RSA-AES256-SHA)" \
    "web_config_noAuth_someCiphers.good.yml: no common suite"
# Both listed: the server's order picks the first of its list.
tls --ciphers ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256 -v >/dev/null
grep -q 'ECDHE-RSA-AES128-GCM-SHA256' "$d/curl.err" ||
    e2e_fail "someCiphers: the server's first suite was not chosen: $(grep -i cipher "$d/curl.err")"
echo "ok: web_config_noAuth_someCiphers.good.yml: the server's preference"
stop

serve web_config_noAuth_someCiphers_noOrder.good.yml
tls --ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384 -v >/dev/null
grep -q 'ECDHE-RSA-AES128-GCM-SHA256' "$d/curl.err" ||
    e2e_fail "someCiphers_noOrder: the client's first suite was not chosen"
echo "ok: web_config_noAuth_someCiphers_noOrder.good.yml: the client's preference"
stop

serve web_config_noAuth_someCurves.good.yml
expect 200 "$(tls --curves P-521)" "web_config_noAuth_someCurves.good.yml: CurveP521"
expect 000 "$(tls --curves P-384)" "web_config_noAuth_someCurves.good.yml: no common curve"
expect 000 "$(tls --tls-max 1.2)" "web_config_noAuth_someCurves.good.yml: TLS 1.2 under min TLS13"
stop

serve web_config_noAuth_noHTTP2.good.yml
expect 200 "$(tls)" "web_config_noAuth_noHTTP2.good.yml: TLS 1.2, a suite HTTP/2 cannot use"
stop

serve web_config_headers.good.yml
expect 200 "$(get "http://$base/metrics")" "web_config_headers.good.yml"
for h in 'X-Frame-Options: deny' 'X-Content-Type-Options: nosniff' 'X-XSS-Protection: 1' \
    'Strict-Transport-Security: max-age=31536000; includeSubDomains' \
    "Content-Security-Policy: default-src 'self' *.test.example.net"; do
    grep -qiF "$h" "$d/headers" || e2e_fail "web_config_headers.good.yml: no '$h'"
done
echo "ok: web_config_headers.good.yml: the five headers"
stop

for f in tls_config_noAuth.requireanyclientcert.good.yml \
    tls_config_noAuth.requireanyclientcertkeyinline.good.yml; do
    serve $f
    # shellcheck disable=SC2046
    expect 200 "$(tls $(client client_selfsigned))" "$f: any certificate"
    expect 000 "$(tls)" "$f: no certificate"
    stop
done

serve tls_config_noAuth.requireandverifyclientcert.good.yml
f=tls_config_noAuth.requireandverifyclientcert.good.yml
# shellcheck disable=SC2046
expect 200 "$(tls $(client client_selfsigned))" "$f: the CA's certificate"
expect 000 "$(tls)" "$f: no certificate"
# shellcheck disable=SC2046
expect 000 "$(tls $(client client2_selfsigned) --tls-max 1.2)" "$f: another certificate"
grep -qi 'alert unknown ca' "$d/curl.err" || e2e_fail "$f: no unknown-CA alert"
stop

serve web_config_auth_client_san.good.yaml
# shellcheck disable=SC2046
expect 200 "$(tls $(client client2_selfsigned))" "web_config_auth_client_san.good.yaml: SAN test3"
stop
# Valid as a file (it starts); its SAN list matches nothing client2 has.
serve web_config_auth_client_san.bad.yaml
# shellcheck disable=SC2046
expect 000 "$(tls $(client client2_selfsigned) --tls-max 1.2)" \
    "web_config_auth_client_san.bad.yaml: no allowed SAN"
grep -qi 'alert bad certificate' "$d/curl.err" || e2e_fail "client_san.bad: no bad-certificate alert"
stop

serve web_config_rate_limiter_nonblocking.yaml
for i in $(seq 11); do
    expect 200 "$(get "http://$base/metrics")" "web_config_rate_limiter_nonblocking.yaml: request $i"
done
stop
serve web_config_rate_limiter_one_second.yaml
expect 429 "$(get "http://$base/metrics")" "web_config_rate_limiter_one_second.yaml: burst 0"
stop
serve web_config_rate_limiter_headers.yaml
expect 200 "$(get "http://$base/metrics")" "web_config_rate_limiter_headers.yaml: the burst"
expect 429 "$(get "http://$base/metrics")" "web_config_rate_limiter_headers.yaml: beyond it"
grep -qi '^X-Frame-Options: deny' "$d/headers" || e2e_fail "rate_limiter_headers: no header on 429"
stop

# Its users and passwords (bob's hash has cost 18 in the TLS file: start-up does not wait).
for f in web_config_users_noTLS.good.yml web_config_users.good.yml; do
    serve $f
    if [[ $f == *noTLS* ]]; then u() { get "$@" "http://$base/metrics"; }; else u() { tls "$@"; }; fi
    expect 401 "$(u)" "$f: no credentials"
    expect 200 "$(u -u dave:dave123)" "$f: dave"
    expect 200 "$(u -u carol:carol123)" "$f: carol"
    expect 401 "$(u -u dave:bad)" "$f: a wrong password"
    expect 401 "$(u -u nonexistent:nonexistent)" "$f: an unknown user"
    stop
done

# Its refused files: exit 1, the file, the line and the key (or the words) to blame.
refuses() { # refuses FILE LINE WORDS
    local out rc=0
    out=$(timeout 10 "$build/joulestat" serve --no-gpu --rapl-source off \
        --listen-address 127.0.0.1:0 --web.config.file "$d/$1" 2>&1) || rc=$?
    ((rc == 1)) || e2e_fail "$1: exit $rc, expected 1 ($out)"
    [[ $out == *"$1:$2:"*"$3"* ]] || e2e_fail "$1: message lacks '$1:$2:' or '$3': $out"
    echo "ok: refuses $1"
}
refuses web_config_junk.yml 2 "invalid YAML"
refuses web_config_junk_key.yml 2 "unknown key 'cert_filse'"
refuses web_config_noAuth_certPath_empty.bad.yml 2 "cert_file must be a file name"
refuses web_config_noAuth_cert_empty.bad.yml 2 "cert must be PEM text"
refuses web_config_noAuth_keyPath_empty.bad.yml 3 "key_file must be a file name"
refuses web_config_noAuth_key_empty.bad.yml 3 "key must be PEM text"
refuses web_config_noAuth_certPath_keyPath_empty.bad.yml 2 "cert_file must be a file name"
refuses web_config_noAuth_certPath_invalid.bad.yml 2 "cert_file: cannot read"
refuses web_config_noAuth_keyPath_invalid.bad.yml 2 "cert_file: cannot read"
refuses web_config_noAuth_certPath_keyPath_invalid.bad.yml 2 "cert_file: cannot read"
refuses web_config_noAuth.bad.yml 4 "client_ca_file"
refuses web_config_auth_clientCAs_invalid.bad.yml 4 "client_ca_file: cannot read"
refuses web_config_auth_clientCAs_nocerts.bad.yml 5 "client_ca_file"
refuses web_config_auth_clientCAsText_nocerts.bad.yml 5 "client_ca: holds no PEM certificate"
refuses web_config_auth_user_list_invalid.bad.yml 5 "basic_auth_users.john: not a bcrypt hash"
refuses web_config_noAuth_inventedCiphers.bad.yml 6 "unknown cipher suite"
refuses web_config_noAuth_inventedCurves.bad.yml 6 "curve_preferences: 'CurveP257'"
refuses web_config_noAuth_wrongTLSVersion.bad.yml 5 "min_version: 'TLS111'"
refuses web_config_noAuth_noHTTP2Cipher.bad.yml 5 "cipher_suites lacks the suite HTTP/2 requires"
refuses web_config_headers_content_type_options.bad.yml 3 "X-Content-Type-Options: 'sniff'"
refuses web_config_headers_frame_options.bad.yml 3 "X-Frame-Options: 'foo'"
refuses web_config_headers_extra_header.bad.yml 3 "'Content-Type' is not one of"
refuses web_config_auth_client_san_no_client_auth.bad.yaml 4 "client_allowed_sans needs"
refuses web_config_auth_client_san_optional_cert.bad.yaml 6 "client_allowed_sans needs"

# Every file of the directory was looked at above.
for f in "$src"/tests/http/toolkit/*.y*ml; do
    f=${f##*/}
    grep -q -- "$f" "$0" || e2e_fail "$f is in tests/http/toolkit but not checked here"
done
echo "PASS: exporter-toolkit's valid web-config files serve, its invalid ones are refused"
