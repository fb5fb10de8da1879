#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# exporter-toolkit's client certificates, cipher suites and rate limit with real clients
# (curl, openssl s_client) and certificates made here:
#   - RequireAndVerifyClientCert: a client certificate from the client CA with an allowed
#     SAN is served; none, one from another CA, one whose extended key usage is not client
#     authentication, or one without an allowed SAN fails the TLS handshake (TLS 1.3 and 1.2), in TLS 1.2 with the alert Go sends (bad certificate,
#     unknown CA);
#   - RequireAnyClientCert and VerifyClientCertIfGiven (after SIGHUP) as Go defines them;
#   - cipher_suites limits what the server negotiates;
#   - rate_limit answers 429 beyond its burst, /healthz is not counted;
#   - every configuration of exporter-toolkit's kinds that is valid starts joulestat, every
#     invalid one is refused with the file, line and key.
# Usage: http-mtls.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }
d=$E2E_TMP
e2e_test_ca "$d"

# Client certificates: from the client CA with SAN scraper.test (good) or other.test
# (wrong SAN), and one from an unrelated CA (stranger).
client() { # client NAME CA SAN [PURPOSE]
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$1.key" \
        -out "$d/$1.csr" -subj "/CN=$1" 2>/dev/null
    printf 'subjectAltName=DNS:%s\nextendedKeyUsage=%s\n' "$3" "${4:-clientAuth}" >"$d/$1.ext"
    openssl x509 -req -in "$d/$1.csr" -CA "$d/$2.crt" -CAkey "$d/$2.key" -CAcreateserial \
        -out "$d/$1.crt" -days 2 -extfile "$d/$1.ext" 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/clientca.key" \
    -out "$d/clientca.crt" -subj /CN=client-ca -days 2 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/otherca.key" \
    -out "$d/otherca.crt" -subj /CN=other-ca -days 2 2>/dev/null
client good clientca scraper.test
client wrongsan clientca other.test
client stranger otherca scraper.test
client server-only clientca scraper.test serverAuth # a server's certificate of that CA

web=$d/web.yml
tls='tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n'
printf "$tls"'  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: clientca.crt\n  client_allowed_sans: [scraper.test]\n' >"$web"
port=$(e2e_free_port)
"$build/joulestat" serve --no-gpu --rapl-source off --listen-address "127.0.0.1:$port" \
    --web.config.file "$web" >"$d/joulestat.log" 2>&1 &
pid=$!
E2E_PIDS+=($pid)
base=https://127.0.0.1:$port
code() { # code PATH [CLIENT]: the HTTP code (000: no answer)
    local path=$1 who=${2:-}
    curl -s -o /dev/null --max-time 10 -w '%{http_code}' --cacert "$d/ca.crt" \
        ${who:+--cert "$d/$who.crt" --key "$d/$who.key"} "$base$path" || true
}
expect() { # expect CODE PATH [CLIENT] WHAT
    local got
    got=$(code "$2" "${3:-}")
    [[ $got == "$1" ]] || e2e_fail "$4: HTTP $got, expected $1"
    echo "ok: $4 ($got)"
}
refused() { # refused PATH [CLIENT] WHAT: 403 (or no answer at all)
    local got
    got=$(code "$1" "${2:-}")
    [[ $got == 403 || $got == 000 ]] || e2e_fail "$3: HTTP $got, expected a refusal"
    echo "ok: $3 refused ($got)"
}
# handshake_refused CLIENT ALERT WHAT: the TLS handshake fails and no HTTP answer comes, in
# TLS 1.3 and 1.2; in TLS 1.2 with the alert named (curl prints OpenSSL's name of it). In
# TLS 1.3 the client has sent its request when the server refuses its certificate, and the
# server's close may reset the connection before the client reads the alert.
handshake_refused() {
    local who=$1 alert=$2 what=$3 out max
    for max in 1.3 1.2; do
        out=$(curl -s -S -o /dev/null --max-time 10 -w '%{http_code}' --cacert "$d/ca.crt" \
            --tls-max "$max" ${who:+--cert "$d/$who.crt" --key "$d/$who.key"} \
            "$base/metrics" 2>&1) || true
        [[ ${out:(-3)} == 000 ]] || e2e_fail "$what (TLS $max): HTTP ${out:(-3)}, expected none"
        [[ $max == 1.3 || ${out,,} == *"alert $alert"* ]] ||
            e2e_fail "$what (TLS $max): no '$alert' alert: $out"
    done
    echo "ok: $what: handshake refused (TLS 1.2 alert: $alert)"
}
hup() {
    local before
    before=$(grep -c "SIGHUP" "$d/joulestat.log" || true)
    kill -HUP "$pid"
    for _ in $(seq 50); do
        (($(grep -c "SIGHUP" "$d/joulestat.log" || true) > before)) && break
        sleep 0.1
    done
    tail -1 "$d/joulestat.log" | grep -q "reloaded" || e2e_fail "reload: $(tail -1 "$d/joulestat.log")"
}
e2e_wait 20 curl -sf --cacert "$d/ca.crt" --cert "$d/good.crt" --key "$d/good.key" \
    "$base/healthz" || e2e_fail "exporter did not come up"

expect 200 /metrics good "RequireAndVerifyClientCert, a certificate of the client CA"
handshake_refused "" "bad certificate" "RequireAndVerifyClientCert, no certificate"
refused /healthz "" "RequireAndVerifyClientCert, /healthz without a certificate"
handshake_refused stranger "unknown ca" "RequireAndVerifyClientCert, a certificate of another CA"
handshake_refused wrongsan "bad certificate" "RequireAndVerifyClientCert, a SAN not allowed"
handshake_refused server-only "bad certificate" \
    "RequireAndVerifyClientCert, a certificate of the client CA for servers only"

# The certificate request names the acceptable authorities only where a client CA is given
# (as Go's server does): named from the server's own chain, a client whose issuer is not
# among them sends no certificate.
ca_names() {
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -tls1_2 </dev/null 2>/dev/null |
        grep -A2 "client certificate CA names" || true
}
names=$(ca_names)
[[ $names == *Acceptable* && $names == *CN* ]] || e2e_fail "client CA not named: $names"
printf "$tls"'  client_auth_type: RequireAnyClientCert\n' >"$web"
hup
names=$(ca_names)
[[ $names == *"No client certificate CA names sent"* ]] ||
    e2e_fail "RequireAnyClientCert named authorities: $names"
echo "ok: authorities named with a client CA only"
expect 200 /metrics stranger "RequireAnyClientCert, any certificate"
handshake_refused "" "bad certificate" "RequireAnyClientCert, no certificate"

printf "$tls"'  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: clientca.crt\n' >"$web"
hup
expect 200 /metrics "" "VerifyClientCertIfGiven, no certificate"
expect 200 /metrics wrongsan "VerifyClientCertIfGiven, a certificate of the client CA"
handshake_refused stranger "unknown ca" "VerifyClientCertIfGiven, a certificate of another CA"

# Cipher suites (TLS 1.2, where the suite is negotiated by name).
printf "$tls"'  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n  max_version: TLS12\n' >"$web"
hup
suite() { # suite OPENSSL_NAME: the suite the server agreed to, or nothing
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -tls1_2 -cipher "$1" </dev/null 2>/dev/null |
        sed -n 's/^ *Cipher *: *//p' | head -1 || true
}
[[ $(suite ECDHE-RSA-AES128-GCM-SHA256) == ECDHE-RSA-AES128-GCM-SHA256 ]] ||
    e2e_fail "the listed suite was not agreed: '$(suite ECDHE-RSA-AES128-GCM-SHA256)'"
got=$(suite ECDHE-RSA-AES256-GCM-SHA384)
[[ -z $got || $got == 0000 || $got == "(NONE)" ]] || e2e_fail "an unlisted suite was agreed: $got"
echo "ok: cipher_suites: only the listed suite is agreed"

# Rate limit: a burst of 2, one more a minute: the third scrape in a row gets 429.
printf 'rate_limit:\n  interval: 1m\n  burst: 2\n' >"$web"
printf "$tls" | cat - "$web" >"$web.new" && mv "$web.new" "$web"
hup
expect 200 /metrics "" "rate_limit, first of the burst"
expect 200 /metrics "" "rate_limit, second of the burst"
expect 429 /metrics "" "rate_limit, beyond the burst"
expect 200 /healthz "" "rate_limit, /healthz not counted"

# Valid configurations of each kind start joulestat; invalid ones are refused, naming the
# file, the line and the key.
starts() { # starts WHAT (the config in $web): joulestat serves with it
    local p log=$d/start.log
    p=$(e2e_free_port)
    "$build/joulestat" serve --no-gpu --rapl-source off --listen-address "127.0.0.1:$p" \
        --web.config.file "$web" >"$log" 2>&1 &
    local spid=$!
    E2E_PIDS+=($spid)
    e2e_wait 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" || e2e_fail "$1 did not start: $(tail -3 "$log")"
    kill "$spid"
    wait "$spid" 2>/dev/null || true
    echo "ok: starts with $1"
}
refuses() { # refuses WHAT WORDS: joulestat exits 1 naming web.yml:LINE and WORDS
    local out rc=0
    out=$(timeout 10 "$build/joulestat" serve --no-gpu --rapl-source off \
        --listen-address 127.0.0.1:0 --web.config.file "$web" 2>&1) || rc=$?
    ((rc == 1)) || e2e_fail "$1: exit $rc, expected 1 ($out)"
    [[ $out == *web.yml:[0-9]*"$2"* ]] || e2e_fail "$1: message lacks file, line or '$2': $out"
    echo "ok: refuses $1"
}
printf "$tls"'  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: clientca.crt\n' >"$web"
starts "RequireAndVerifyClientCert and a CA file"
printf "$tls"'  client_auth_type: VerifyClientCertIfGiven\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_256_CBC_SHA]\n' >"$web"
starts "VerifyClientCertIfGiven and cipher suites"
printf "$tls"'  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n  max_version: TLS12\nhttp_server_config:\n  http2: false\n' >"$web"
starts "a suite HTTP/2 cannot use, http2 off"
printf 'rate_limit:\n  interval: "1s"\n  burst: 0\n' >"$web"
starts "a rate limit of burst 0"
printf "$tls"'  client_auth_type: VerifyClientCertIfGiven\n  curve_preferences: [CurveP256, CurveP384, CurveP521, X25519, X25519MLKEM768]\n' >"$web"
starts "every curve, the post-quantum hybrid too"
printf "$tls"'  client_auth_type: Whatever\n' >"$web"
refuses "an unknown client_auth_type" "client_auth_type: 'Whatever'"
printf "$tls"'  client_ca_file: clientca.crt\n' >"$web"
refuses "a client CA without client_auth_type" "client_auth_type is NoClientCert"
printf "$tls"'  cipher_suites: [TLS_RSA_WITH_MY_SECURE_CIPHER]\n' >"$web"
refuses "an invented cipher suite" "unknown cipher suite"
printf "$tls"'  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n  max_version: TLS12\n' >"$web"
refuses "a suite HTTP/2 cannot use, http2 on" "lacks the suite HTTP/2 requires"
printf "$tls"'  client_auth_type: RequestClientCert\n  client_allowed_sans: [a]\n' >"$web"
refuses "client_allowed_sans without a required certificate" "client_allowed_sans needs"
# No system CA bundle (a distroless image; one of the paths of another distribution):
# RequireAndVerifyClientCert without a client CA verifies no certificate, not even one of
# the server's own CA, whose chain the server sends (and GnuTLS asks with).
if unshare -m true 2>/dev/null; then
    client peer ca scraper.test
    cat "$d/server.crt" "$d/ca.crt" >"$d/chain.crt"
    printf 'tls_server_config:\n  cert_file: chain.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n' >"$web"
    port=$(e2e_free_port)
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -m sh -c 'mount -t tmpfs none /etc/ssl && { [ ! -d /etc/pki ] ||
        mount -t tmpfs none /etc/pki; } && exec "$0" "$@"' "$build/joulestat" serve --no-gpu \
        --rapl-source off --listen-address "127.0.0.1:$port" --web.config.file "$web" \
        >"$d/nobundle.log" 2>&1 &
    E2E_PIDS+=($!)
    base=https://127.0.0.1:$port
    e2e_wait 20 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" || e2e_fail "no-bundle server did not come up"
    handshake_refused peer "unknown ca" "no system CA bundle, a certificate of the server's own CA"
else
    echo "SKIP: no mount namespace here: the case without a system CA bundle"
fi
echo "PASS: client certificates, cipher suites, rate limit"
