#!/bin/bash
# deadline: 600
# The automount map (nsscache's automount map and files cache): from a
# real slapd, the automountMap ou=auto.master under [automount] ldap_base,
# its automount entries, and the map each names; auto.master and one file
# a map, named after the mount point (auto.home, auto.mnt_data), byte for
# byte nsscache's own output against the same directory in RFC 2307, RFC
# 2307bis and AD mode (golden/, tests/data/nsscache/ldap/reference.sh), and
# read back in the format autofs documents (auto.master(5), autofs(5); no
# autofs is installed here to parse them itself).  Hostile mount points,
# keys and locations are rejected alone, none names a file outside
# files_dir; a directory without auto.master fails the run and writes
# nothing; an unchanged directory is not mapped again.  From an http
# server (http_automount_base_url), as nsscache's http source reads them:
# the same files.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slapd.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'nginx_stop; slapd_stop; sunkd_cleanup' EXIT
GEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/gen-ldif.py"
GOLDEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/golden"
mkdir -p "$T/cache" "$T/ts"

# nsscache's example: [automount] with its base and an empty suffix (auto.master, auto.home, ...).
write_conf() { # URI BASE [MORE DEFAULT LINES]
        {
                printf '[DEFAULT]\nsource = ldap\ncache = files\nmaps = automount\n'
                printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$T/cache"
                printf 'ldap_uri = %s\nldap_retry_max = 1\nldap_retry_delay = 0.1\n%b\n' "$1" "${3:-}"
                printf '[automount]\nldap_base = %s\nfiles_cache_filename_suffix =\n' "$2"
        } > "$T/nsscache.conf"
        chmod 644 "$T/nsscache.conf"
}
start_sunkd() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    page_size: 2
    interval: 1h
    splay: 1h"
        sunkd_start
}
refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}
# golden/MODE's auto.* files (files_dir in auto.master as @FILES_DIR@), byte for byte, and no other.
automount_golden_is() { # MODE
        local f bad=
        for f in "$GOLDEN/$1"/auto.*; do
                sed "s|@FILES_DIR@|$T/cache|" "$f" | cmp -s - "$T/cache/${f##*/}" || bad="$bad ${f##*/}"
        done
        is "${bad:-none}" none "$1: auto.master and each map are nsscache's, byte for byte"
        [ -z "$bad" ] || diff <(sed "s|@FILES_DIR@|$T/cache|" "$GOLDEN/$1/${bad# }") "$T/cache/${bad# }" | head -5 | sed 's/^/# /'
        is "$(cd "$T/cache" && ls auto.* | tr '\n' ' ')" "$(cd "$GOLDEN/$1" && ls auto.* | tr '\n' ' ')" \
                "$1: no other file"
}
# The files as autofs reads them: auto.master(5) "mount-point map [options]", the map a file
# here; autofs(5) "key [-options] location", blank-separated, nothing else on a line.
autofs_parse() {
        python3 - "$T/cache" <<'EOF'
import os, re, sys
d = sys.argv[1]
maps = []
for n, line in enumerate(open(os.path.join(d, "auto.master"), "rb").read().decode("ascii").split("\n")[:-1], 1):
    f = line.split()
    assert len(f) in (2, 3) and " ".join(f) == line, "auto.master:%d: %r" % (n, line)
    assert f[0].startswith("/") and ".." not in f[0].split("/"), "auto.master:%d: mount point %r" % (n, f[0])
    assert os.path.dirname(f[1]) == d and os.path.isfile(f[1]), "auto.master:%d: map %r" % (n, f[1])
    maps.append(f[1])
for m in maps:
    for n, line in enumerate(open(m, "rb").read().decode("ascii").split("\n")[:-1], 1):
        f = line.split()
        assert " ".join(f) == line and len(f) in (2, 3), "%s:%d: %r" % (m, n, line)
        assert len(f) == 2 or f[1].startswith("-"), "%s:%d: options %r" % (m, n, f[1])
        assert re.match(r"^[^/ ]+$", f[0]), "%s:%d: key %r" % (m, n, f[0])
print(len(maps))
EOF
}

# 1. RFC 2307 directory: the maps nsscache writes, the hostile entries left out.
"$GEN" rfc2307 > "$T/rfc2307.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/rfc2307.ldif"
write_conf "$SLAPD_URI" ou=automounts,dc=example,dc=com
start_sunkd
refresh
is "$RC" 0 "the refresh with the automount map succeeds" || diag "$OUT"
automount_golden_is rfc2307
is "$(cat "$T/cache/auto.master")" "/home $T/cache/auto.home
/mnt/data $T/cache/auto.mnt_data" "auto.master names each map's file in files_dir, its options dropped as nsscache drops them"
is "$(autofs_parse 2>&1)" 2 "auto.master and its maps read in autofs's format"
is "$(find "$T" -name 'auto..*' -o -name '*etc*' -path "$T/cache/*" | wc -l)" 0 "the mount point with '..' names no file"
rejected=$(module_status nsscache rejected)
like "$rejected" '"invalid-name": 2[,}]' "the mount point with '..' and the key with a blank counted"
like "$rejected" '"invalid-entry": 1[,}]' "the location with a newline counted"
like "$(module_status nsscache entries)" '"automount": 2' "status counts auto.master's lines"
[ -e "$T/ts/timestamp-automount-update" ] && [ -e "$T/ts/timestamp-automount-modify" ]
is "$?" 0 "timestamp-automount-update and -modify written"

# 2. Unchanged: fetched, not mapped, nothing rewritten; a changed key rewrites its map.
before=$(stat -c %Y.%i "$T/cache/auto.home")
refresh
refresh
is "$(module_status nsscache replayed)" true "an unchanged directory is not mapped again"
is "$(stat -c %Y.%i "$T/cache/auto.home")" "$before" "auto.home is left alone"
cat > "$T/change.ldif" <<'EOF'
dn: cn=alice,ou=auto.home,ou=automounts,dc=example,dc=com
changetype: modify
replace: automountInformation
automountInformation: -rw,intr nfs9:/export/home/alice
EOF
slapd_modify "$T/change.ldif"
refresh
is "$RC" 0 "the refresh after a change succeeds" || diag "$OUT"
is "$(head -1 "$T/cache/auto.home")" "alice -rw,intr nfs9:/export/home/alice" "the change is in auto.home"

# 3. RFC 2307bis and Active Directory mode read automount maps the same way.
for mode in rfc2307bis ad; do
        sunkd_stop
        slapd_stop
        rm -f "$T/cache"/*
        "$GEN" "$mode" > "$T/$mode.ldif" || bail_out "cannot generate the directory"
        slapd_start "$T/$mode.ldif"
        [ "$mode" = ad ] && more="ldap_ad = 1" || more="ldap_rfc2307bis = 1"
        write_conf "$SLAPD_URI" ou=automounts,dc=example,dc=com "$more"
        start_sunkd
        refresh
        is "$RC" 0 "$mode: the refresh succeeds" || diag "$OUT"
        automount_golden_is "$mode"
done

# 4. source = http: auto.master at http_automount_base_url, each map at its location resolved
# against it; lines that are not a map's, locations that are not http(s), bad mount points left out.
sunkd_stop
rm -f "$T/cache"/*
W="$T/www"
mkdir -p "$W/maps"
printf '# the maps\n/home auto.home\n/mnt/data\tauto.mnt_data\n/../x auto.home\n/scratch file:///etc/shadow\n/opt auto.opt -rw\n' > "$W/maps/auto.master"
{ cat "$GOLDEN/rfc2307/auto.home"; printf 'bad line with four\n'; } > "$W/maps/auto.home"
cp "$GOLDEN/rfc2307/auto.mnt_data" "$W/maps/"
nginx_start "$W"
{
        printf '[DEFAULT]\nsource = http\ncache = files\nmaps = automount\nhttp_retry_max = 1\n'
        printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$T/cache"
        printf 'http_automount_base_url = %s/maps/\n[automount]\nfiles_cache_filename_suffix =\n' "$NGINX_URL"
} > "$T/nsscache.conf"
start_sunkd
refresh
is "$RC" 0 "source = http: the refresh succeeds" || diag "$OUT"
automount_golden_is rfc2307
rejected=$(module_status nsscache rejected)
like "$rejected" '"invalid-line": 2[,}]' "the master line with options and the map line of four fields counted"
like "$rejected" '"invalid-name": 1[,}]' "the mount point with '..' counted"
like "$rejected" '"invalid-entry": 1[,}]' "the file:// location counted, never fetched"
refresh
refresh
is "$(module_status nsscache replayed)" true "unchanged files are not mapped again"
like "$(module_status nsscache not_modified)" '^[1-9]' "and are asked for with validators (304)"
sunkd_stop
nginx_stop

# 5. No auto.master under the base: the run fails, naming it, and writes nothing.
sunkd_stop
rm -f "$T/cache"/*
write_conf "$SLAPD_URI" ou=people,dc=example,dc=com
start_sunkd
refresh
isnt "$RC" 0 "a base without auto.master fails the run"
like "$OUT" "no automountMap ou=auto.master under 'ou=people,dc=example,dc=com'" "and says where it looked"
is "$(ls "$T/cache" | wc -l)" 0 "nothing is written"
done_testing
