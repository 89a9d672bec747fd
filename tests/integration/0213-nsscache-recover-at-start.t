#!/bin/bash
# A publish a crash interrupted is finished by the module's first refresh,
# started at once (not after the splay), on a worker, and before the fetch:
# here the SCIM server is unreachable and the maps still end up all from the
# interrupted run.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"

HELPER="$SUNKD_BUILDDIR/tests/lib/nsscache-publish"
[ -x "$HELPER" ] || bail_out "$HELPER not built"
[ "$(id -u)" = 0 ] || bail_out "must run as root: the shadow cache is chowned to group shadow"
getent group shadow >/dev/null || bail_out "no group shadow"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
FILES="passwd.cache passwd.cache.ixname passwd.cache.ixuid shadow.cache shadow.cache.ixname
group.cache group.cache.ixname group.cache.ixgid sshkey.cache sshkey.cache.ixname"

# Generation 1 published, generation 2 killed after its first data rename.
mkdir -p "$T/ref2" "$T/cache" "$T/ts" "$T/state/nsscache"
chmod 700 "$T/state/nsscache"
"$HELPER" -d "$T/ref2" -g 2 1 || bail_out "reference"
"$HELPER" -d "$T/cache" -s "$T/state/nsscache" -g 1 0 || bail_out "initial publish"
out=$("$HELPER" -d "$T/cache" -s "$T/state/nsscache" -g 2 -K rename-data:1 1 2>&1)
ok "a publish interrupted midway leaves its journal" test -e "$T/state/nsscache/publish-journal"
mixed=
for f in $FILES; do cmp -s "$T/ref2/$f" "$T/cache/$f" || mixed=1; done
is "$mixed" 1 "and maps from two runs"

# A port nothing listens on: the fetch fails.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scim_token
sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: http://127.0.0.1:$port/scim/v2
    files_dir: $T/cache
    timestamp_dir: $T/ts
    token_file: $T/token
    interval: 1h
    splay: 1h"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log" # from the start: sunkd_start truncates it
sunkd_start
ok "the refresh is started at once to finish it" wait_log "refreshing now to finish it"
ok "the publish is finished" wait_log "Finished the publish into '$T/cache' that was interrupted"
ok "and the fetch fails" wait_log "Refresh failed"
diff=
for f in $FILES; do cmp -s "$T/ref2/$f" "$T/cache/$f" || diff="$diff $f"; done
is "$diff" "" "every map is from the interrupted run"
ok "no journal stays" test ! -e "$T/state/nsscache/publish-journal"
is "$(job_field nsscache.refresh runs)" 1 "one run did it"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
