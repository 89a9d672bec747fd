#!/bin/bash
# The shipped examples are valid: etc/sunkd.yaml as it is, with every
# "#key: value" line uncommented, and in the native nsscache mode; the
# installed sunkd.yaml.example; and etc/nsscache.conf.example through
# nsscache_conf.  Only module_dir, the nsscache.conf path, the token file
# and the prolog and epilog directories (which must exist) and the socket's group (which must exist: the example
# names the cluster's slurm group) are changed, and in nsscache.conf the
# placeholder URL, which is refused as it is.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" \
   "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$SUNKD_BUILDDIR/modules/prolog/.libs/prolog.so" \
   "$MODDIR/" || bail_out "modules not built"

EXAMPLE="$SUNKD_SRCDIR/etc/sunkd.yaml"
INSTALLED="$SUNKD_BUILDDIR/etc/sunkd.yaml.example"
NSSCACHE_CONF="$SUNKD_SRCDIR/etc/nsscache.conf.example"
[ -f "$INSTALLED" ] || bail_out "etc/sunkd.yaml.example not built in $SUNKD_BUILDDIR"

# The example nsscache.conf with a SCIM server in place of its placeholder
# (a loopback one: --check-config connects to nothing), and a token file.
URL_LINE=$(grep -n '^scim_base_url=' "$NSSCACHE_CONF" | cut -d: -f1)
[ -n "$URL_LINE" ] || bail_out "no scim_base_url in $NSSCACHE_CONF"
sed -e 's|^scim_base_url=.*|scim_base_url=http://127.0.0.1:9/api/organizations/example/scim/v2|' \
        "$NSSCACHE_CONF" > "$T/nsscache.conf"
chmod 644 "$T/nsscache.conf"
install -d -m 0755 "$T/prolog.d" "$T/epilog.d"
printf 'example-token\n' > "$T/token"
chmod 600 "$T/token"

# adapt FILE OUT: this build's modules, the example nsscache.conf with a
# URL, the token file, a group this machine has.
# root's group by its gid: a test that runs alongside may publish a user named
# "0" through libnss-cache, which `id -gn 0` would take for a name.
adapt() {
        sed -E -e "s|^#?module_dir: .*|module_dir: $MODDIR|" \
                -e "s|^socket_group: .*|socket_group: $(getent group 0 | cut -d: -f1)|" \
                -e "s|^( *)nsscache_conf: .*|\1nsscache_conf: $T/nsscache.conf|" \
                -e "s|^( *)#?prolog_dir: .*|\1prolog_dir: $T/prolog.d|" \
                -e "s|^( *)#?epilog_dir: .*|\1epilog_dir: $T/epilog.d|" \
                -e "s|^( *)token_file: .*|\1token_file: $T/token|" "$1" > "$2"
        chmod 644 "$2"
}

# uncomment FILE: every "#key: value" line (a default or an alternative).
uncomment() {
        sed -E 's/^( *)#( *[A-Za-z_][A-Za-z0-9_]*:( |$))/\1\2/' "$1"
}

check() {
        local out rc
        out=$("$SUNKD" --check-config -c "$1" 2>&1); rc=$?
        [ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
        return $rc
}

adapt "$EXAMPLE" "$T/as-is.yaml"
ok "etc/sunkd.yaml passes --check-config (nsscache_conf mode)" check "$T/as-is.yaml"
like "$(grep -E '^ *nsscache_conf:' "$T/as-is.yaml")" "nsscache_conf: $T/nsscache.conf" "it reads nsscache.conf"
like "$(grep -E '^ *token_file:' "$T/as-is.yaml")" "token_file: $T/token" "and a token file"

adapt "$INSTALLED" "$T/installed.yaml"
ok "the installed sunkd.yaml.example passes --check-config" check "$T/installed.yaml"

uncomment "$EXAMPLE" > "$T/all.in"
adapt "$T/all.in" "$T/all.yaml"
n=$(diff "$EXAMPLE" "$T/all.in" | grep -c '^>')
ok "there are settings to uncomment ($n lines)" test "$n" -ge 40
ok "with every #key line uncommented it still passes" check "$T/all.yaml"

grep -v -E '^ *nsscache_conf:' "$T/all.yaml" > "$T/native.yaml"
chmod 644 "$T/native.yaml"
like "$(cat "$T/native.yaml")" "^    scim_base_url: https://" "the native mode names the SCIM server"
ok "the native nsscache mode alone passes --check-config" check "$T/native.yaml"

# Every top-level key the code accepts is in the example.
keys=$(python3 "$SUNKD_SRCDIR/tests/lib/c-scan.py" rows "$SUNKD_SRCDIR/agent/conf.c" top_keys |
        sed -n -E 's/^\{ "([a-z_]+)",.*/\1/p')
[ -n "$keys" ] || bail_out "no top-level keys found in agent/conf.c"
for k in $keys; do
        like "$(cat "$T/all.yaml")" "^$k:" "top-level key '$k' from agent/conf.c is in etc/sunkd.yaml"
done

# nsscache.conf.example alone, through nsscache_conf: its placeholder URL
# is refused at its line, a real one passes.
sunkd_config "modules:
  nsscache:
    nsscache_conf: $NSSCACHE_CONF
    token_file: $T/token"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1); rc=$?
is "$rc" 2 "etc/nsscache.conf.example as it is fails --check-config: its URL is a placeholder"
like "$out" "$NSSCACHE_CONF:$URL_LINE: key 'scim_base_url': is a placeholder" "at its line"
sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    token_file: $T/token"
ok "etc/nsscache.conf.example with a URL passes --check-config through nsscache_conf" check "$T/sunkd.yaml"

# The checks are real: a broken copy is refused.
sed -e 's/^#log_level: info/log_level: chatty/' "$T/as-is.yaml" > "$T/bad.yaml"
chmod 644 "$T/bad.yaml"
out=$("$SUNKD" --check-config -c "$T/bad.yaml" 2>&1); rc=$?
is "$rc" 2 "a bad value in a copy of the example is refused"
like "$out" "bad.yaml:[0-9]+:[0-9]+: key 'log_level'" "with its place"

done_testing
