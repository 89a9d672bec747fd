#!/bin/bash
# deadline: 400
# A section no run could succeed with is a config error, located at the line
# that makes it so: an nsscache.conf that cannot be read, a token_file that
# cannot be read or lies in a directory another user owns (as an
# s3_credentials_file), no token at all, an export_dir that is not there,
# the example's placeholder URL.  Each is
# refused by --check-config (2), at start (2) and by a reload, which keeps
# the running configuration.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed"
command -v timeout >/dev/null || bail_out "timeout (coreutils) is needed"
command -v openssl >/dev/null || bail_out "openssl is needed to make the signing key"
NOBODY=$(id -u nobody) || bail_out "no user nobody"
# The token must come from the config under test, not from this shell.
unset NSSCACHE_SCIM_AUTH_TOKEN
scim_start "$SUNKD_SRCDIR/etc/demo/scim-data.json"
scim_token
mkdir -p "$T/cache" "$T/ts" "$T/tokdir"
cp "$SUNKD_SRCDIR/etc/nsscache.conf.example" "$T/nsscache.conf"
chmod 644 "$T/nsscache.conf"
PLACEHOLDER=$(sed -n 's/^scim_base_url=//p' "$T/nsscache.conf")
INI_URL_LINE=$(grep -n '^scim_base_url=' "$T/nsscache.conf" | cut -d: -f1)
like "$PLACEHOLDER" "<platform-host>" "the example's URL is a placeholder"
Y="$T/sunkd.yaml"

# write_config [KEY: VALUE]...: the section with nsscache_conf ($NSSCONF, else
# the example), and each argument as one more line; sets LINE_<key> to the line
# of each.  The section itself (nsscache:) is line 5, column 3.
write_config() {
        local text="modules:
  nsscache:
    nsscache_conf: ${NSSCONF:-$T/nsscache.conf}
    files_dir: $T/cache
    timestamp_dir: $T/ts
    interval: 1h
    splay: 0s" kv
        for kv in "$@"; do
                text="$text
    $kv"
        done
        sunkd_config "$text"
}
line_of() { grep -n "^    $1:" "$Y" | cut -d: -f1; }
GOOD=("scim_base_url: $SCIM_URL" "token_file: $T/token")

# refused DESC REGEX: the config now in $Y fails --check-config with exit 2
# and REGEX, makes sunkd exit 2 at start with REGEX, and is refused by a
# reload of the daemon that runs the good config, which keeps refreshing
# with it (a refresh with the refused config could not succeed).
refused() {
        local out rc
        out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
        is "$rc" 2 "$1: --check-config exits 2"
        like "$out" "$2" "$1: --check-config names the line"
        out=$(timeout 120 "$SUNKD" -c "$Y" 2>&1); rc=$?
        is "$rc" 2 "$1: sunkd refuses to start with 2"
        like "$out" "$2" "$1: and names the line"
        sunkd_hup
        like "$(log_since)" "$2" "$1: a reload is refused, naming the line"
        like "$(log_since)" "keeping the running one" "$1: the running configuration is kept"
        ctl run nsscache.refresh > /dev/null; rc=$?
        is "$rc" 0 "$1: and the next refresh runs with it"
}

write_config "${GOOD[@]}"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "the good config passes --check-config"
[ "$rc" = 0 ] || diag "$out"
sunkd_start
ok "first refresh" wait_runs nsscache.refresh 1
is "$(job_field nsscache.refresh last_result)" "success" "and it succeeds"

# --- nsscache_conf that cannot be read --------------------------------------
NSSCONF=/nonexistent/nsscache.conf write_config "${GOOD[@]}"
refused "a missing nsscache_conf" \
        "$Y:6:5: key 'nsscache_conf': cannot read '/nonexistent/nsscache.conf': No such file or directory$"
mkdir -p "$T/confdir"
NSSCONF=$T/confdir write_config "${GOOD[@]}"
refused "nsscache_conf a directory" "$Y:6:5: key 'nsscache_conf': cannot read '$T/confdir': Is a directory"
chmod 666 "$T/nsscache.conf"
write_config "${GOOD[@]}"
refused "a world-writable nsscache_conf" \
        "$Y:6:5: key 'nsscache_conf': refusing config file '$T/nsscache.conf': group- or world-writable \(owner uid 0, mode 0666\)"
chmod 644 "$T/nsscache.conf"
# Unreadable is for another uid: root reads a file of mode 0600.  The state
# directory and the module are root's, which that uid accepts as well.
cp "$T/nsscache.conf" "$T/private.conf"
chmod 600 "$T/private.conf"
NSSCONF=$T/private.conf write_config "${GOOD[@]}"
out=$(setpriv --reuid "$NOBODY" --regid "$NOBODY" --clear-groups "$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 2 "an nsscache_conf that sunkd's uid cannot read: --check-config exits 2"
like "$out" "$Y:6:5: key 'nsscache_conf': cannot read '$T/private.conf': Permission denied" "and names the line"

# --- the token ----------------------------------------------------------------
write_config "scim_base_url: $SCIM_URL" "token_file: $T/missing-token"
refused "a missing token_file" \
        "$Y:$(line_of token_file):5: key 'token_file': '$T/missing-token': No such file or directory$"
write_config "scim_base_url: $SCIM_URL" "token_file: $T/tokdir"
refused "token_file a directory" "$Y:$(line_of token_file):5: key 'token_file': '$T/tokdir': refused: must be a regular file"
install -m 644 "$T/token" "$T/token.644"
write_config "scim_base_url: $SCIM_URL" "token_file: $T/token.644"
refused "a world-readable token_file" \
        "$Y:$(line_of token_file):5: key 'token_file': '$T/token.644': refused: must be a regular file owned by root or uid 0 with mode 0600 or stricter \(is 0644\)"
: > "$T/token.empty"
chmod 600 "$T/token.empty"
write_config "scim_base_url: $SCIM_URL" "token_file: $T/token.empty"
refused "an empty token_file" "$Y:$(line_of token_file):5: key 'token_file': '$T/token.empty': is empty"
write_config "scim_base_url: $SCIM_URL"
refused "no token at all" \
        "$Y:5:3: no SCIM token: set token_file, NSSCACHE_SCIM_AUTH_TOKEN or scim_auth_token$"
write_config "scim_base_url: $SCIM_URL" 'scim_auth_token: " "'
refused "a blank scim_auth_token" "$Y:$(line_of scim_auth_token):5: key 'scim_auth_token': token is empty$"
# Any of the three is a token, the environment as each run reads it.
write_config "scim_base_url: $SCIM_URL"
out=$(NSSCACHE_SCIM_AUTH_TOKEN=test-token "$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "NSSCACHE_SCIM_AUTH_TOKEN is a token"
write_config "scim_base_url: $SCIM_URL" "scim_auth_token: test-token"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "scim_auth_token in sunkd.yaml is a token"
sed '/^\[DEFAULT\]$/a scim_auth_token=test-token' "$T/nsscache.conf" > "$T/with-token.conf"
chmod 644 "$T/with-token.conf"
NSSCONF=$T/with-token.conf write_config "scim_base_url: $SCIM_URL"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "scim_auth_token in nsscache.conf is a token"
# A token_file wins, so a missing one is an error even with another token.
write_config "scim_base_url: $SCIM_URL" "token_file: $T/missing-token"
out=$(NSSCACHE_SCIM_AUTH_TOKEN=test-token "$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 2 "a missing token_file is an error even with NSSCACHE_SCIM_AUTH_TOKEN set"
# Other faults come first.
write_config "scim_base_url: http://scim.example/v2"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
like "$out" "$Y:$(line_of scim_base_url):5: key 'scim_base_url': plain http:// is only accepted" \
        "without a token, a bad URL is still the error reported"

# --- secrets in a directory another uid owns ---------------------------------
# Its owner can rename another file into the secret's place between two
# reads, whatever the file's own mode: refused as a written path's directory
# is, and through a symlink (a Secret volume's ..data) as well.
mkdir -p "$T/theirs"
install -m 600 "$T/token" "$T/theirs/token"
chown "$NOBODY" "$T/theirs"
ok "(its owner can replace the token)" setpriv --reuid "$NOBODY" --regid "$NOBODY" --clear-groups \
        sh -c "echo other > '$T/theirs/t2' && mv '$T/theirs/t2' '$T/theirs/token'"
install -m 600 "$T/token" "$T/theirs/token"
write_config "scim_base_url: $SCIM_URL" "token_file: $T/theirs/token"
refused "a token_file in a directory another user owns" \
        "$Y:$(line_of token_file):5: key 'token_file': '$T/theirs/token': refused: '$T/theirs' is owned by uid $NOBODY, not root \(mode 0755\)"
ln -sfn theirs/token "$T/token-link"
write_config "scim_base_url: $SCIM_URL" "token_file: $T/token-link"
refused "a token_file linked into a directory another user owns" \
        "$Y:$(line_of token_file):5: key 'token_file': '$T/token-link': refused: '$T/theirs' is owned by uid $NOBODY"
# source = s3: the credentials file, by the same rule.
S3_SECTION="modules:
  nsscache:
    source: s3
    maps: [passwd, group]
    files_dir: $T/cache
    timestamp_dir: $T/ts
    s3_bucket: fleet
    s3_passwd_object: maps/passwd.json
    s3_group_object: maps/group.json
    s3_endpoint: http://127.0.0.1:9
    s3_region: us-east-1
    interval: 1h
    splay: 0s"
printf '[default]\naws_access_key_id = KEYID\naws_secret_access_key = SECRET\n' > "$T/aws-credentials"
chmod 600 "$T/aws-credentials"
install -m 600 "$T/aws-credentials" "$T/theirs/aws-credentials"
sunkd_config "$S3_SECTION
    s3_credentials_file: $T/aws-credentials"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "source = s3 with root's credentials file passes --check-config" || diag "$out"
sunkd_config "$S3_SECTION
    s3_credentials_file: $T/theirs/aws-credentials"
refused "an s3_credentials_file in a directory another user owns" \
        "$Y:$(line_of s3_credentials_file):5: key 's3_credentials_file': '$T/theirs/aws-credentials': refused: '$T/theirs' is owned by uid $NOBODY, not root \(mode 0755\)"
chown +0 "$T/theirs"

# --- export_dir that is not there ------------------------------------------------
# sunkd does not create it (a web server serves it, or it is uploaded):
# every export would fail.
(umask 077 && openssl genpkey -algorithm ed25519 -out "$T/signing.pem" 2>/dev/null) ||
        bail_out "openssl genpkey failed"
mkdir -p "$T/export"
write_config "${GOOD[@]}" "export_dir: $T/export" "export_signing_key: $T/signing.pem"
out=$("$SUNKD" -c "$Y" --check-config 2>&1); rc=$?
is "$rc" 0 "an export_dir that exists passes --check-config" || diag "$out"
write_config "${GOOD[@]}" "export_dir: $T/no-export" "export_signing_key: $T/signing.pem"
refused "an export_dir that does not exist" \
        "$Y:$(line_of export_dir):5: key 'export_dir': '$T/no-export': No such file or directory \(sunkd does not create it\)"
ok "and it was not created" test ! -e "$T/no-export"
: > "$T/export-file"
write_config "${GOOD[@]}" "export_dir: $T/export-file" "export_signing_key: $T/signing.pem"
refused "an export_dir that is a file" "$Y:$(line_of export_dir):5: key 'export_dir': '$T/export-file': Not a directory"

# --- the placeholder ----------------------------------------------------------
write_config "scim_base_url: $PLACEHOLDER" "token_file: $T/token"
refused "the placeholder URL in sunkd.yaml" \
        "$Y:$(line_of scim_base_url):5: key 'scim_base_url': is a placeholder or its host cannot be parsed"
write_config "token_file: $T/token"
refused "the placeholder URL in nsscache.conf" \
        "$T/nsscache.conf:$INI_URL_LINE: key 'scim_base_url': is a placeholder or its host cannot be parsed"
write_config "scim_base_url: https://scim.example/api/organizations/<organization>/scim/v2" "token_file: $T/token"
refused "a placeholder in the URL's path" "$Y:$(line_of scim_base_url):5: key 'scim_base_url': is a placeholder"
ok "no token in any message" eval '! grep -qF test-token "$T/sunkd.log"'

write_config "${GOOD[@]}"
sunkd_hup
like "$(log_since)" "Configuration reloaded\." "the good config reloads"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
