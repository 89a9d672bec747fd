#!/bin/bash
# End to end: SCIM fixture -> sunkd's nsscache module -> /etc/*.cache ->
# libnss-cache -> getent and id, with lookups running during refreshes.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
sunkd_setup
trap 'scim_stop; [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID"; etc_cache_restore; sunkd_cleanup' EXIT
etc_cache_claim
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
scim_start "$SUNKD_SRCDIR/etc/demo/scim-data.json"
scim_token
sed -e '/^passwd:/{/cache/!s/$/ cache/}' -e '/^group:/{/cache/!s/$/ cache/}' "$ETC_BACKUP/nsswitch.conf" > /etc/nsswitch.conf

sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: /etc
    timestamp_dir: $T/ts
    token_file: $T/token
    interval: 1h
    splay: 0s"
sunkd_start
ok "first refresh done" wait_runs nsscache.refresh 1

is "$(getent -s cache passwd ada)" "ada:x:20001:30001:Ada Lovelace:/mnt/home/ada:/bin/bash" "getent passwd by name"
is "$(getent -s cache passwd 20002)" "grace:x:20002:30001:Grace Hopper:/mnt/home/grace:/bin/zsh" "getent passwd by uid"
is "$(getent -s cache group research)" "research:x:30001:ada,grace" "getent group by name"
is "$(getent -s cache group 30100)" "gpu-users:x:30100:ada,linus" "getent group by gid"
like "$(getent -s cache shadow linus)" "^linus:" "getent shadow"
getent -s cache passwd mallory >/dev/null; is "$?" 2 "the rejected uid-0 user does not resolve"
getent -s cache passwd nosuchuser >/dev/null; is "$?" 2 "a missing user is exit 2"
is "$(id ada)" "uid=20001(ada) gid=30001(research) groups=30001(research),30100(gpu-users)" "id with initgroups"
is "$(stat -c '%a %U %G' /etc/shadow.cache)" "$(stat -c '%a %U %G' /etc/shadow)" "shadow.cache is not world-readable"

# Lookups never fail while refreshes publish (the data alternates).
cp "$SUNKD_SRCDIR/etc/demo/scim-data.json" "$T/a.json"
python3 - "$T/a.json" "$T/b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for u in d["Users"]:
    u["name"]["familyName"] += " II"
json.dump(d, open(sys.argv[2], "w"))
PY
# The reader runs until told to stop (or the test's directory is gone); each
# lookup must give one of the two published versions of ada.
( fails=0; n=0
  while [ -d "$T" ] && [ ! -e "$T/stop" ]; do
          case "$(getent -s cache passwd ada)" in
          "ada:x:20001:30001:Ada Lovelace:"* | "ada:x:20001:30001:Ada Lovelace II:"*) ;;
          *) fails=$((fails + 1)) ;;
          esac
          getent -s cache group 30001 >/dev/null || fails=$((fails + 1))
          n=$((n + 1))
  done; echo "$n $fails" > "$T/reader" ) &
READER=$!
runs_ok=0
seen=0
for i in $(seq 30); do
        scim_stop
        if [ $((i % 2)) = 0 ]; then scim_start "$T/a.json"; want="Ada Lovelace"; else scim_start "$T/b.json"; want="Ada Lovelace II"; fi
        sed -i "s|scim_base_url: .*|scim_base_url: $SCIM_URL|" "$T/sunkd.yaml"
        ctl reload >/dev/null && ctl run nsscache.refresh >/dev/null && runs_ok=$((runs_ok + 1))
        # What this refresh published is what a lookup by name and by uid returns.
        [ "$(getent -s cache passwd ada | cut -d: -f5)" = "$want" ] &&
                [ "$(getent -s cache passwd 20001 | cut -d: -f5)" = "$want" ] && seen=$((seen + 1))
done
touch "$T/stop"; wait "$READER"
read n fails < "$T/reader"
is "$runs_ok" 30 "30 refreshes published alternating data"
is "$seen" 30 "after each one getent returns the entry it published"
is "$fails" 0 "no lookup failed during the refreshes ($n reader rounds)"
ok "the reader really ran" test "$n" -gt 10

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
