#!/bin/bash
# nsscache over https: the certificate is verified by default, ca_file names
# the CA to trust, a name mismatch is refused, tls_verify: false is explicit.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
command -v openssl >/dev/null || bail_out "openssl (Debian package openssl) is needed to make test certificates"
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
DATA="$SUNKD_SRCDIR/etc/demo/scim-data.json"

# A private CA, a certificate for 127.0.0.1 and one for another name.
P="$T/pki"
mkdir -p "$P"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
{
        openssl req -x509 $ec -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj /CN=sunkd-test-ca &&
        for n in good:IP:127.0.0.1 other:DNS:scim.example; do
                name=${n%%:*}
                openssl req $ec -keyout "$P/$name.key" -out "$P/$name.csr" -subj "/CN=${n#*:*:}" &&
                printf 'subjectAltName=%s\n' "${n#*:}" > "$P/$name.ext" &&
                openssl x509 -req -in "$P/$name.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" \
                        -CAcreateserial -days 2 -extfile "$P/$name.ext" -out "$P/$name.pem" || exit 1
        done
} > "$T/openssl.log" 2>&1 || { sed 's/^/# /' "$T/openssl.log"; bail_out "could not make test certificates"; }
chmod 644 "$P"/*.pem

scim_token
mkdir -p "$T/cache"
serve() {
        scim_stop
        scim_start "$DATA" --tls-cert "$P/$1.pem" --tls-key "$P/$1.key"
        SCIM_URL="https://127.0.0.1:${SCIM_URL#http://127.0.0.1:}"
}

run_with() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: $T/cache
    timestamp_dir: $T/cache
    token_file: $T/token
    interval: 1h
    splay: 1h
    $1"
        sunkd_start
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
        sunkd_stop
}

serve good
run_with ""
is "$RC" 1 "a certificate from an unknown CA is refused by default"
like "$OUT" "certificate|SSL" "and the error says why"
ok "nothing was written" test ! -e "$T/cache/passwd.cache"
is "$(grep -c /Users "$SCIM_LOG")" 0 "no request reached the server"

run_with "ca_file: $P/ca.pem"
is "$RC" 0 "with ca_file naming the CA the refresh succeeds"
ok "passwd.cache written" test -s "$T/cache/passwd.cache"

serve other
run_with "ca_file: $P/ca.pem"
is "$RC" 1 "a certificate for another name is refused"
like "$OUT" "certificate|SSL|match" "and the error says why"

run_with "tls_verify: false"
is "$RC" 0 "tls_verify: false accepts it"
like "$(cat "$T/sunkd.log")" "[Vv]erification .*disabled" "and says so in the log"
done_testing
