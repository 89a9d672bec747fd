#!/bin/bash
# A publish whose renames fail halfway, in a running sunkd, read through
# libnss-cache.  The failure is real: /etc/group.cache is a mount point (as
# a file bind-mounted into a pod is), which rename(2) refuses with EBUSY
# after passwd.cache has been renamed.  Lookups go on answering throughout,
# each map from one run; the error names the file; the journal and the
# staged files stay; a run while the obstacle is there changes nothing; and
# once it is gone the next start, or the next run, finishes the publish:
# every map from the run that failed, then the new one.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

# The bind mount lives in a mount namespace of the test's own: nothing
# outside sees it, and it goes when the test ends, however it ends.
if [ -z "${SUNKD_TEST_MNTNS:-}" ]; then
        [ "$(id -u)" = 0 ] || bail_out "must run as root: libnss-cache reads only /etc, and the test mounts"
        command -v unshare >/dev/null || bail_out "unshare (util-linux) is not installed"
        unshare --mount --propagation private true || bail_out "cannot make a mount namespace (unshare --mount)"
        SUNKD_TEST_MNTNS=1 exec unshare --mount --propagation private -- "$BASH" "$0" "$@"
        bail_out "cannot exec unshare"
fi

. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
sunkd_setup
READER=
OBSTACLE=
cleanup() {
        [ -n "$READER" ] && kill "$READER" 2>/dev/null
        [ -n "$OBSTACLE" ] && umount "$OBSTACLE" 2>/dev/null
        scim_stop
        [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID" 2>/dev/null
        etc_cache_restore
        sunkd_cleanup
}
trap cleanup EXIT
etc_cache_claim
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
sed -e '/^passwd:/{/cache/!s/$/ cache/}' -e '/^group:/{/cache/!s/$/ cache/}' "$ETC_BACKUP/nsswitch.conf" > /etc/nsswitch.conf
FILES="passwd.cache passwd.cache.ixname passwd.cache.ixuid shadow.cache shadow.cache.ixname
group.cache group.cache.ixname group.cache.ixgid sshkey.cache sshkey.cache.ixname"
JOURNAL="$T/state/nsscache/publish-journal"

# Generation N of the directory: ada's name gets N-1 " II"s; research has
# ada and grace, then linus too, then ada and linus.
python3 - "$SUNKD_SRCDIR/etc/demo/scim-data.json" "$T" <<'PY'
import json, sys
for n in (1, 2, 3):
    d = json.load(open(sys.argv[1]))
    for u in d["Users"]:
        if u["userName"].startswith("ada@"):
            u["name"]["familyName"] += " II" * (n - 1)
    for g in d["Groups"]:
        if g["sunkPosixGroupName"] == "research" and n >= 2:
            g["members"].append({"value": "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", "sunkPosixUsername": "linus"})
        if g["sunkPosixGroupName"] == "research" and n == 3:
            g["members"] = [m for m in g["members"] if m["sunkPosixUsername"] != "grace"]
    json.dump(d, open(f"{sys.argv[2]}/gen{n}.json", "w"))
PY
[ -s "$T/gen3.json" ] || bail_out "cannot write the SCIM data"
ADA1="ada:x:20001:30001:Ada Lovelace:"
ADA2="ada:x:20001:30001:Ada Lovelace II:"
ADA3="ada:x:20001:30001:Ada Lovelace II II:"
RESEARCH1="research:x:30001:ada,grace"
RESEARCH2="research:x:30001:ada,grace,linus"
RESEARCH3="research:x:30001:ada,linus"

serve() {
        scim_stop
        scim_start "$T/gen$1.json"
        [ -e "$T/sunkd.yaml" ] && sed -i "s|scim_base_url: .*|scim_base_url: $SCIM_URL|" "$T/sunkd.yaml"
}
serve 1
scim_token
sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: /etc
    timestamp_dir: $T/ts
    token_file: $T/token
    interval: 1h
    splay: 0s"

temps() { (cd /etc && find . -maxdepth 1 -name '.sunkd-*' -printf '%f\n' | sort | xargs) }
# passwd and group lookups by name and by id, on one line.
lookups() {
        printf '%s|%s|%s|%s\n' "$(getent -s cache passwd ada | cut -d: -f1-5)" \
                "$(getent -s cache passwd 20001 | cut -d: -f1-5)" \
                "$(getent -s cache group research)" "$(getent -s cache group 30001)"
}
want() { printf '%s|%s|%s|%s\n' "${1%:}" "${1%:}" "$2" "$2"; }
# The obstacle: group.cache bind-mounted onto itself.  Reading it is
# unchanged; renaming over it fails with EBUSY.
obstacle_on() {
        mount --bind /etc/group.cache /etc/group.cache || bail_out "cannot bind-mount /etc/group.cache"
        OBSTACLE=/etc/group.cache
}
obstacle_off() {
        umount /etc/group.cache || bail_out "cannot unmount /etc/group.cache"
        OBSTACLE=
}
refresh() { ctl run nsscache.refresh 2>&1; }

sunkd_start
ok "first refresh done" wait_runs nsscache.refresh 1
is "$(lookups)" "$(want "$ADA1" "$RESEARCH1")" "generation 1 is published"

# A reader runs through everything below; every answer must be one of the
# published generations, and no lookup may fail.
( fails=0; n=0
  while [ -d "$T" ] && [ ! -e "$T/stop" ]; do
          case "$(getent -s cache passwd ada | cut -d: -f1-5):" in
          "$ADA1" | "$ADA2" | "$ADA3") ;;
          *) fails=$((fails + 1)) ;;
          esac
          case "$(getent -s cache group 30001)" in
          "$RESEARCH1" | "$RESEARCH2" | "$RESEARCH3") ;;
          *) fails=$((fails + 1)) ;;
          esac
          n=$((n + 1))
  done; echo "$n $fails" > "$T/reader" ) &
READER=$!

# 1. Generation 2 changes passwd and group; group.cache cannot be replaced.
serve 2
ctl reload >/dev/null || bail_out "reload failed"
obstacle_on
log_mark
out=$(refresh); rc=$?
is "$rc" 1 "the run fails"
like "$out" "/etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed: Device or resource busy" \
        "sunkctl names the file and the reason"
ok "the log says the journal finishes it, naming the file" wait_log \
        "Refresh failed while putting the maps in place; the next run or start finishes it from the journal: /etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed: Device or resource busy"
like "$(job_field nsscache.refresh last_error)" "/etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed" \
        "sunkctl jobs shows it"
ok "the journal stays" test -e "$JOURNAL"
is "$(grep -c '^data ' "$JOURNAL")" 2 "it lists passwd and group, the maps that changed"
staged=$(temps)
is "$(printf '%s\n' $staged | sed -E 's/\.[A-Za-z0-9]{6}$//' | sort | xargs)" \
        ".sunkd-group.cache .sunkd-group.cache.ixgid .sunkd-group.cache.ixname" \
        "group's staged data and indexes stay for it (nothing lost)"
# What readers see: passwd from generation 2, group still from generation 1
# (its old indexes are gone, so lookups scan the data, which is correct).
is "$(lookups)" "$(want "$ADA2" "$RESEARCH1")" \
        "lookups: passwd from the new run, group whole from the old one"
ok "group's old indexes are gone" test ! -e /etc/group.cache.ixname -a ! -e /etc/group.cache.ixgid
cp -a /etc/passwd.cache /etc/passwd.cache.ixname /etc/passwd.cache.ixuid "$T/" || bail_out "copy"
half=$(cd /etc && ls -li --time-style=+%s $FILES 2>&1)

# 2. A run while the obstacle is there finishes nothing and fetches nothing:
# what it fetched could not be published.
log_mark
requests=$(grep -c '^GET ' "$SCIM_LOG")
out=$(refresh); rc=$?
is "$rc" 1 "a run with the obstacle still there fails"
like "$out" "/etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed: Device or resource busy" \
        "sunkctl names the file and the reason"
ok "it logs that finishing the interrupted publish failed, naming the file" wait_log \
        "Failed to finish the interrupted publish into '/etc'; until it is, the maps may be from two runs and nothing new is fetched: /etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed: Device or resource busy"
unlike "$(log_since)" "existing caches are unchanged" "and does not claim the caches are as they were"
like "$(module_status nsscache last_error)" "^/etc/\.sunkd-group\.cache\.[A-Za-z0-9]{6}: rename-data failed" \
        "sunkctl status names the file"
is "$(grep -c '^GET ' "$SCIM_LOG")" "$requests" "it sent no request to the SCIM server"
is "$(cd /etc && ls -li --time-style=+%s $FILES 2>&1)" "$half" "and changes no file"
is "$(temps)" "$staged" "the staged files are the same ones"
ok "the journal stays" test -e "$JOURNAL"

# 3. The obstacle gone, sunkd restarted: the start finishes the publish.
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly with a publish pending"
obstacle_off
LOG_MARK=0 LOG_MARKED="$T/sunkd.log" # from the start: sunkd_start truncates it
sunkd_start
ok "the start sees the journal" wait_log "A publish into '/etc' was interrupted; refreshing now to finish it\."
ok "and finishes the publish" wait_log "Finished the publish into '/etc' that was interrupted\."
ok "then the refresh finds every map as generation 2 renders it" wait_log "Refreshed: .*; 0 map\(s\) changed"
is "$(lookups)" "$(want "$ADA2" "$RESEARCH2")" "lookups: every map from generation 2"
ok "no journal stays" test ! -e "$JOURNAL"
is "$(temps)" "" "no staged file stays"
same=
for f in passwd.cache passwd.cache.ixname passwd.cache.ixuid; do cmp -s "$T/$f" "/etc/$f" || same="$same $f"; done
is "$same" "" "passwd is the one the failed run put in place"
ok "group has its indexes again" test -s /etc/group.cache.ixname -a -s /etc/group.cache.ixgid

# 4. The same, finished by the next run instead of a start.
serve 3
ctl reload >/dev/null || bail_out "reload failed"
obstacle_on
out=$(refresh); rc=$?
is "$rc" 1 "generation 3 fails halfway too"
ok "its journal stays" test -e "$JOURNAL"
is "$(lookups)" "$(want "$ADA3" "$RESEARCH2")" "lookups: passwd from generation 3, group from generation 2"
obstacle_off
log_mark
out=$(refresh); rc=$?
is "$rc" 0 "the next run succeeds ($out)"
ok "it finished the interrupted publish first" log_since_has "Finished the publish into '/etc' that was interrupted\."
ok "no journal stays" test ! -e "$JOURNAL"
is "$(temps)" "" "no staged file stays"
is "$(lookups)" "$(want "$ADA3" "$RESEARCH3")" "lookups: every map from generation 3"

touch "$T/stop"
wait "$READER"
READER=
read -r n fails < "$T/reader"
is "$fails" 0 "no lookup failed or saw a third version ($n reader rounds)"
ok "the reader really ran" test "$n" -gt 5
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
