#!/bin/bash
# deadline: 600
# source = http: nsscache's map files from a real nginx on loopback, read
# through an nsscache.conf as nsscache reads it.  An unchanged file costs
# one request and a 304; a change, gzip, bzip2 and an ETag round are
# applied; a server that is down keeps the maps; a hostile file loses its
# bad lines only; a file cut short or too large writes nothing; https with
# http_tls_cacertfile.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
command -v bzip2 >/dev/null || bail_out "bzip2 is needed to make a bzip2 map file"
trap 'nginx_stop; sunkd_cleanup' EXIT
W="$T/www"
mkdir -p "$W" "$T/cache" "$T/ts"
printf 'root:x:0:0:root:/root:/bin/bash\nlocaluser:x:1500:1500::/home/localuser:/bin/sh\n' > "$T/local-passwd"
printf 'root:x:0:\nlocalgrp:x:1600:\n' > "$T/local-group"

cat > "$W/passwd" <<'EOF'
alice:x:2001:2001:Alice A:/home/alice:/bin/bash
bob:x:2002:2002:Bob B:/home/bob:/bin/bash
carol:x:2003:2003::/home/carol:/bin/sh
EOF
cat > "$W/shadow" <<'EOF'
alice:*:::::::
bob:*:::::::
carol:*:::::::
EOF
cat > "$W/group" <<'EOF'
team:x:3001:alice,bob
EOF
cat > "$W/sshkey" <<'EOF'
alice:['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop']
bob:
carol:
EOF

# The nsscache.conf a node of an nsscache fleet has, with this test's server and directories.
write_conf() { # URL [MORE LINES]
        {
                printf '[DEFAULT]\nsource = http\ncache = files\nmaps = passwd, shadow, group, sshkey\n'
                printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$T/cache"
                printf 'http_passwd_url = %s/passwd\nhttp_shadow_url = %s/shadow\n' "$1" "$1"
                printf 'http_group_url = %s/group\nhttp_sshkey_url = %s/sshkey\n' "$1" "$1"
                printf 'http_retry_max = 1\nhttp_retry_delay = 0.1\n%s\n' "${2:-}"
        } > "$T/nsscache.conf"
        chmod 644 "$T/nsscache.conf"
}
start_sunkd() { # [MORE YAML KEYS]
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    interval: 1h
    splay: 1h
    ${1:-}"
        sunkd_start
}
refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}

nginx_start "$W"
write_conf "$NGINX_URL"
start_sunkd
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "an nsscache.conf with source = http is accepted" || diag "$out"

# 1. First fetch: 200 for each file, the maps as served.
refresh
is "$RC" 0 "the first refresh succeeds" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$W/passwd")" "passwd.cache is the served file"
is "$(cat "$T/cache/sshkey.cache")" "$(cat "$W/sshkey")" "sshkey.cache too"
is "$(cat "$T/cache/group.cache")" "$(cat "$W/group")" "group.cache too"
is "$(grep -c '^GET /passwd 200 ' "$NGINX_LOG")" 1 "passwd was fetched once, 200"
like "$(grep '^GET /passwd 200 ' "$NGINX_LOG")" "\[gzip\]$" "gzip-encoded, decoded by libcurl"

# 2. Unchanged: one conditional request per file, each a 304.
refresh
is "$RC" 0 "the second refresh succeeds" || diag "$OUT"
is "$(nginx_requests /passwd)" 2 "one more request for passwd"
is "$(grep -c '^GET /passwd 304 ' "$NGINX_LOG")" 1 "answered 304"
like "$(grep '^GET /passwd 304 ' "$NGINX_LOG")" '^GET /passwd 304 \[(W/)?(\\x22|")[^]]+\] \[[A-Z][a-z]{2}, [0-9]{2} ' \
        "sent with If-None-Match and If-Modified-Since"
is "$(grep -c ' 304 ' "$NGINX_LOG")" 4 "every one of the four files answered 304"
is "$(module_status nsscache not_modified)" 4 "status counts the 304s"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$W/passwd")" "the maps stay as they were"

# 3. A changed file is applied (dave added).
printf 'dave:x:2004:2004:Dave D:/home/dave:/bin/bash\n' >> "$W/passwd"
printf 'dave:*:::::::\n' >> "$W/shadow"
printf 'dave:\n' >> "$W/sshkey"
touch -d '+2 seconds' "$W/passwd" "$W/shadow" "$W/sshkey"
refresh
is "$RC" 0 "a refresh after a change succeeds" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$W/passwd")" "the changed passwd is applied"
is "$(grep -c '^GET /passwd 200 ' "$NGINX_LOG")" 2 "with a 200"
is "$(grep -c '^GET /group 304 ' "$NGINX_LOG")" 2 "the unchanged group file answered 304 again"

# 4. ETag: a change that keeps the modification time is seen through If-None-Match alone.
mtime=$(stat -c %Y "$W/group")
printf 'team:x:3001:alice,bob,carol\n' > "$W/group"
touch -d "@$mtime" "$W/group"
refresh
is "$RC" 0 "a refresh after a same-time change succeeds" || diag "$OUT"
is "$(cat "$T/cache/group.cache")" "team:x:3001:alice,bob,carol" "the change is applied: the ETag differed"

# 5. bzip2: a .bz2 file is recognised by its magic, as nsscache does.
printf 'erin:x:2005:2005::/home/erin:/bin/bash\n' | cat "$W/passwd" - | bzip2 -c > "$W/passwd.bz2"
write_conf "$NGINX_URL"
sed -i "s|^http_passwd_url = .*|http_passwd_url = $NGINX_URL/passwd.bz2|" "$T/nsscache.conf"
sunkd_stop
start_sunkd
refresh
is "$RC" 0 "a refresh from a bzip2 file succeeds" || diag "$OUT"
like "$(cat "$T/cache/passwd.cache")" "^erin:x:2005:" "its content is applied"
write_conf "$NGINX_URL"
sunkd_stop
start_sunkd
refresh

# 6. Hostile file: the bad lines are counted and dropped, the rest applied.
cp "$W/passwd" "$T/passwd.good"
cat >> "$W/passwd" <<'EOF'
toor:x:0:0::/root:/bin/bash
localuser:x:2100:2100::/home/x:/bin/bash
sshd:x:2101:2101::/home/x:/bin/bash
mallory:x:02102:2102::/home/mallory:/bin/bash
# a comment
eve:x:2103:2103::/home/eve/../root:/bin/bash
frank:x:2104:2104::/home/frank:/bin/bash:extra
grace:x:2105:2105::/home/grace:/bin/bash
EOF
printf "sshd:['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB evil']\nroot:['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC evil']\n" >> "$W/sshkey"
touch -d '+4 seconds' "$W/passwd" "$W/sshkey"
refresh
is "$RC" 0 "a file with hostile lines still refreshes" || diag "$OUT"
like "$(cat "$T/cache/passwd.cache")" "grace:x:2105:" "its good lines are applied"
unlike "$(cat "$T/cache/passwd.cache")" "toor|localuser|sshd|mallory|eve|frank" "no bad line is"
unlike "$(cat "$T/cache/sshkey.cache")" "^(sshd|root):" "no key for a local or reserved name"
rejected=$(module_status nsscache rejected)
like "$rejected" '"id-out-of-range": 1' "uid 0 counted as out of range"
like "$rejected" '"local-account": [34]' "local and reserved names counted"
like "$rejected" '"invalid-line": 3' "the leading zero, the comment and the extra field counted as invalid lines"
like "$rejected" '"invalid-home": 1' "the home with .. counted"
cp "$T/passwd.good" "$W/passwd"
touch -d '+6 seconds' "$W/passwd"
refresh

# 7. A file cut short or too large writes nothing.
cp "$T/cache/passwd.cache" "$T/passwd.before"
before=$(stat -c %Y.%s "$T/cache/passwd.cache")
head -c -1 "$T/passwd.good" > "$W/passwd"
touch -d '+8 seconds' "$W/passwd"
refresh
is "$RC" 1 "a file whose last line has no newline fails the run"
like "$OUT" "passwd: line 4: no newline at the end" "and says where"
is "$(stat -c %Y.%s "$T/cache/passwd.cache")" "$before" "passwd.cache is untouched"
ls -a "$T/cache" > "$T/cache.list"
unlike "$(cat "$T/cache.list")" "\.sunkd-" "no temporary file is left"
cp "$T/passwd.good" "$W/passwd"
python3 -c 'import sys; sys.stdout.write("".join("u%d:x:%d:%d::/home/u%d:/bin/sh\n" % (i, 5000 + i, 5000 + i, i) for i in range(100)))' >> "$W/passwd"
touch -d '+10 seconds' "$W/passwd"
sunkd_stop
start_sunkd "http_max_size: 2K"
refresh
is "$RC" 1 "a file over http_max_size fails the run"
like "$OUT" "larger than 2048 bytes" "and says so"
is "$(stat -c %Y.%s "$T/cache/passwd.cache")" "$before" "passwd.cache is untouched"
head -c 3000000 /dev/zero | tr '\0' 'a' | sed 's/$/\n/' | bzip2 -c > "$W/bomb.bz2"
sed -i "s|^http_passwd_url = .*|http_passwd_url = $NGINX_URL/bomb.bz2|" "$T/nsscache.conf"
sunkd_stop
start_sunkd "http_max_size: 64K"
refresh
is "$RC" 1 "a small bzip2 file that decompresses past the cap fails the run"
like "$OUT" "larger than 65536 bytes once decompressed" "and says so"
is "$(stat -c %Y.%s "$T/cache/passwd.cache")" "$before" "passwd.cache is untouched"

# 8. Server down: the maps are kept, status says how old they are.
write_conf "$NGINX_URL"
sunkd_stop
start_sunkd
refresh
is "$RC" 0 "the server back to a good file" || diag "$OUT"
cp "$T/cache/passwd.cache" "$T/passwd.kept"
nginx_stop
refresh
is "$RC" 1 "with the server down the refresh fails"
like "$OUT" "Could not connect|Couldn't connect" "and says why"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "the maps are kept"
is "$(module_status nsscache last_result)" failure "status says the last run failed"
like "$(module_status nsscache age_sec)" '^[0-9]+$' "and how old the maps are"
like "$(ctl status)" "source_modified" "and when the files were last modified at the source"
sunkd_stop

# 9. https with http_tls_cacertfile naming a private CA.
P="$T/pki"
mkdir -p "$P"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
{
        openssl req -x509 $ec -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj /CN=sunkd-test-ca &&
        openssl req $ec -keyout "$P/srv.key" -out "$P/srv.csr" -subj /CN=127.0.0.1 &&
        printf 'subjectAltName=IP:127.0.0.1\n' > "$P/srv.ext" &&
        openssl x509 -req -in "$P/srv.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial -days 2 \
                -extfile "$P/srv.ext" -out "$P/srv.pem"
} > "$T/openssl.log" 2>&1 || { sed 's/^/# /' "$T/openssl.log"; bail_out "could not make test certificates"; }
chmod 644 "$P"/*.pem
nginx_start "$W" "$P/srv.pem" "$P/srv.key"
write_conf "$NGINX_URL"
start_sunkd
refresh
is "$RC" 1 "https from an unknown CA is refused"
like "$OUT" "certificate|SSL" "and the error says why"
sunkd_stop
write_conf "$NGINX_URL" "http_tls_cacertfile = $P/ca.pem"
start_sunkd
refresh
is "$RC" 0 "with http_tls_cacertfile naming the CA the refresh succeeds" || diag "$OUT"
is "$(grep -c '^GET /passwd 200 ' "$NGINX_LOG")" 1 "over https"
sunkd_stop
done_testing
