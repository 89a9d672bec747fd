#!/bin/bash
# deadline: 400
# A fleet following one producer: a producer sunkd maps the SCIM fixture
# and exports signed maps into a directory a real nginx serves; three node
# sunkds follow its manifest.  They converge on its generation with
# identical maps, and a user changed at the directory reaches all three.
# When the producer is down they keep their maps and say how old they are;
# a half-uploaded export (a file the manifest names missing or truncated)
# fails their runs naming the file and leaves every map of the previous
# generation, never a mix; a producer restored from an older backup is
# refused until the admin raises its generation past the nodes'.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
. "$SUNKD_SRCDIR/tests/lib/producer.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
NODES="1 2 3"
MAPS="passwd shadow group sshkey"
declare -A NODE_PID
nodes_stop() {
        local k
        for k in $NODES; do
                [ -n "${NODE_PID[$k]:-}" ] && kill -TERM "${NODE_PID[$k]}" 2>/dev/null && wait "${NODE_PID[$k]}"
                NODE_PID[$k]=
        done
}
trap 'nodes_stop; producer_stop; nginx_stop; scim_stop; sunkd_cleanup' EXIT
# nginx serves $T/served, a link: to the producer's export_dir, or to a copy staged by hand.
W="$T/producer/export"
producer_setup "$SUNKD_SRCDIR/etc/demo/scim-data.json"
ln -s "$W" "$T/served"
serve() {
        ln -sfn "$1" "$T/served"
}
produce() {
        pproduce > "$T/out" 2>&1 || { sed 's/^/# /' "$T/out"; bail_out "the producer's refresh failed"; }
}
pgen() {
        cat "$P/state/nsscache/export-generation"
}
# scim_edit PYTHON: change the directory's data (d) and serve it
scim_edit() {
        python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$1
json.dump(d, open(sys.argv[1], 'w'))" "$T/data.json" || bail_out "cannot edit the SCIM data"
        scim_reload
}
user_edit() { # user_edit NAME PYTHON-ON-u
        scim_edit "
for u in d['Users']:
    if u['userName'] == '$1@example.com':
        x = u['urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser']
        $2"
}

# The nodes: each its own socket, state, caches and timestamps.
node_start() {
        local d="$T/n$1"
        mkdir -p "$d/run" "$d/state" "$d/cache" "$d/ts"
        cat > "$d/sunkd.yaml" <<EOF
socket: $d/run/io.sunkd
state_dir: $d/state
module_dir: $MODDIR
modules:
$(node_section "$d")
EOF
        chmod 644 "$d/sunkd.yaml"
        "$SUNKD" -c "$d/sunkd.yaml" 2>> "$d/sunkd.log" &
        NODE_PID[$1]=$!
        wait_for_file "$d/run/io.sunkd" 300 || { sed 's/^/# /' "$d/sunkd.log"; bail_out "node $1 did not start"; }
}
nctl() {
        local k=$1
        shift
        "$SUNKCTL" -s "$T/n$k/run/io.sunkd" --timeout 300 "$@"
}
# nstatus K FIELD: a field of node K's nsscache status
nstatus() {
        nctl "$1" --json status | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["modules"] if m["name"] == "nsscache"]
print(m[0].get("status", {}).get(sys.argv[1], "") if m else "")' "$2"
}
# njob K FIELD: a field of node K's nsscache.refresh job
njob() {
        nctl "$1" --json jobs | python3 -c '
import json, sys
print(*(j.get(sys.argv[1], "") for j in json.load(sys.stdin)["jobs"] if j["name"] == "nsscache.refresh"))' "$2"
}
# refresh K: one run of node K; $RC and $OUT
refresh() {
        OUT=$(nctl "$1" run nsscache.refresh 2>&1)
        RC=$?
}
# refresh_all: one run of every node; $FAILED lists those that failed
refresh_all() {
        local k
        FAILED=
        for k in $NODES; do
                refresh "$k"
                [ "$RC" = 0 ] || FAILED="$FAILED $k"
        done
}
# caches K: node K's map files, name and content, one digest per line
caches() {
        (cd "$T/n$1/cache" && sha256sum $(for m in $MAPS; do echo "$m.cache"; done))
}
# snapshot NAME: every node's caches, kept as $T/NAME.K
snapshot() {
        local k
        for k in $NODES; do
                caches "$k" > "$T/$1.$k"
        done
}
# converged DESC: every node at the producer's generation with its maps
converged() {
        local k m bad=
        for k in $NODES; do
                [ "$(nstatus "$k" manifest_generation)" = "$(pgen)" ] || bad="$bad $k:generation $(nstatus "$k" manifest_generation)"
                for m in $MAPS; do
                        cmp -s "$T/n$k/cache/$m.cache" "$P/cache/$m.cache" || bad="$bad $k:$m"
                done
                [ "$(caches "$k")" = "$(caches 1)" ] || bad="$bad $k:differs from node 1"
        done
        is "$bad" "" "$1: every node at generation $(pgen) with the producer's maps"
}
# kept SNAPSHOT DESC: every node's caches as in SNAPSHOT, byte for byte, all four maps
kept() {
        local k bad=
        for k in $NODES; do
                [ "$(caches "$k")" = "$(cat "$T/$1.$k")" ] || bad="$bad $k"
        done
        is "$bad" "" "$2: every node keeps all the maps of before"
}
# all_status FIELD: node K's FIELD for every K, one line
all_status() {
        local k
        for k in $NODES; do
                printf '%s;' "$(nstatus "$k" "$1")"
        done
}
# repeat VALUE: VALUE once per node, as all_status prints it
repeat() {
        local k
        for k in $NODES; do
                printf '%s;' "$1"
        done
}
# manifest_files DIR: the files DIR's manifest names
manifest_files() {
        python3 -c '
import base64, json, sys
env = json.load(open(sys.argv[1]))
for m in json.loads(base64.b64decode(env["payload"]))["maps"].values():
    print(m["file"])' "$1/manifest"
}

producer_start
nginx_start "$T/served"
produce
is "$(pgen)" 1 "the producer exports generation 1"
cp -a "$P/state/nsscache/export-generation" "$T/export-generation.1"
cp -a "$W" "$T/export.1"
for k in $NODES; do
        node_start "$k"
done

# 1. Three nodes converge on the producer's generation, with identical maps.
refresh_all
is "$FAILED" "" "every node's first run succeeds"
converged "the first runs"
is "$(all_status entries)" "$(repeat "$(nstatus 1 entries)")" "every node reports the same entries"
like "$(nstatus 1 entries)" "'passwd': [1-9]" "and they are not empty"

# 2. A user changed at the directory reaches all three.
user_edit ada "x['sunkLoginShell'] = '/bin/zsh'"
produce
is "$(pgen)" 2 "the change is exported as generation 2"
refresh_all
is "$FAILED" "" "every node applies it"
converged "after ada's shell changed"
for k in $NODES; do
        like "$(grep '^ada:' "$T/n$k/cache/passwd.cache")" ':/bin/zsh$' "node $k: ada's new shell"
done
snapshot gen2

# 3a. The producer down, the web server up: the nodes' runs succeed on 304s,
# the maps are kept, and the age of what they hold shows in their status.
producer_stop
for k in $NODES; do
        stat -c '%n %Y.%s' "$T/n$k/cache/"*.cache > "$T/stat.$k"
done
refresh_all
is "$FAILED" "" "with the producer down every node's run succeeds"
is "$(all_status not_modified)" "$(repeat 1)" "on a 304 for the manifest, nothing else asked for"
kept gen2 "producer down"
modified1=$(all_status source_modified)
success1=$(all_status last_success_usec)
like "$modified1" '^([0-9]+;){3}$' "every node says when its maps were modified at the source"
refresh_all
is "$FAILED" "" "and so does the next run"
is "$(all_status source_modified)" "$modified1" "the maps' modification time stays"
success2=$(all_status last_success_usec)
older=$(python3 -c '
import sys
a, b = ([int(x) for x in s.split(";") if x] for s in sys.argv[1:])
print(len(a) == 3 and all(b[i] > a[i] for i in range(len(a))))' "$success1" "$success2")
is "$older" True "each run finds the maps older: it succeeded later, their source time did not move"
same=1
for k in $NODES; do
        [ "$(stat -c '%n %Y.%s' "$T/n$k/cache/"*.cache)" = "$(cat "$T/stat.$k")" ] || same=0
done
is "$same" 1 "no cache file was rewritten"

# 3b. The web server down as well: the runs fail, nothing is touched, and
# the age of the maps grows run after run (the last success stays put).
nginx_stop
refresh_all
is "$FAILED" " 1 2 3" "with the web server down every node's run fails"
for k in $NODES; do
        like "$(nstatus "$k" last_error)" "Could not connect|Couldn't connect|connect" "node $k: says why"
done
is "$(all_status last_result)" "$(repeat failure)" "every node's status says the last run failed"
is "$(all_status last_success_usec)" "$success2" "the last success stays that of before"
like "$(all_status age_sec)" '^([0-9]+;){3}$' "every node says how old its maps are (age_sec)"
start1=$(for k in $NODES; do njob "$k" last_start_usec; done)
refresh_all
is "$FAILED" " 1 2 3" "and the next run fails too"
start2=$(for k in $NODES; do njob "$k" last_start_usec; done)
older=$(python3 -c '
import sys
s, a, b = ([int(x) for x in t.replace(";", " ").split()] for t in sys.argv[1:])
print(all(b[i] - s[i] > a[i] - s[i] > 0 for i in range(len(s))))' "$success2" "$start1" "$start2")
is "$older" True "the maps were older at the second failed run than at the first"
is "$(all_status last_success_usec)" "$success2" "the last success has not moved"
kept gen2 "web server down"
nginx_restart
producer_start
refresh_all
is "$FAILED" "" "the web server back: every node's run succeeds"
is "$(all_status last_result)" "$(repeat success)" "and says so"

# 4. A half-uploaded export: the new manifest served while a file it names is
# missing, then truncated.  Generation 2's directory is frozen and served
# while the producer exports generation 3 beside it, staged by hand.
cp -a "$W" "$T/export.2"
serve "$T/export.2"
scim_edit "
import copy
u = copy.deepcopy([u for u in d['Users'] if u['userName'] == 'ada@example.com'][0])
x = u['urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser']
u.update(id='a1b2c3d4-0000-4000-8000-000000000257', userName='ken@example.com')
x.update(sunkPosixUsername='ken', sunkPosixUserId=20257, sunkPreferredHomeDirectory='/home/ken')
d['Users'].append(u)
d['Groups'][0]['members'].append({'value': u['id'], 'sunkPosixUsername': 'ken'})"
produce
is "$(pgen)" 3 "ken is exported as generation 3"
ok "with ken in passwd" grep -q '^ken:' "$P/cache/passwd.cache"
like "$(grep "^$(awk -F: '$3 == 30001 { print $1 }' "$P/cache/group.cache"):" "$P/cache/group.cache")" "ken" \
        "and in his group's members"
# every file of generation 3 that generation 2 did not have, for MAP
new_files() {
        local f
        for f in $(manifest_files "$W"); do
                case "$f" in
                "$1"*) [ -e "$T/export.2/$f" ] || echo "$f" ;;
                esac
        done
}
[ -n "$(new_files group)" ] && [ -n "$(new_files passwd)" ] || bail_out "generation 3 changed neither passwd nor group"
rm -rf "$T/staged"
cp -a "$W" "$T/staged"
for f in $(new_files group); do
        rm -f "$T/staged/$f" "$T/staged/$f.gz"
done
missing=$(new_files group | head -n 1)
serve "$T/staged"
refresh_all
is "$FAILED" " 1 2 3" "the group file missing: every node's run fails"
diag "node 1: $(nstatus 1 last_error)"
for k in $NODES; do
        like "$(nstatus "$k" last_error)" "$missing.*(404|Not Found)|(404|Not Found).*$missing" \
                "node $k: the error names the missing file"
done
kept gen2 "a file missing"
is "$(all_status manifest_generation)" "$(repeat 2)" "every node stays at generation 2"
for f in $(new_files group); do
        cp -a "$W/$f" "$W/$f.gz" "$T/staged/" 2>/dev/null || cp -a "$W/$f" "$T/staged/"
done
for f in $(new_files passwd); do
        head -c $(($(stat -c %s "$T/staged/$f") / 2)) "$W/$f" > "$T/staged/$f"
        rm -f "$T/staged/$f.gz"
done
truncated=$(new_files passwd | head -n 1)
refresh_all
is "$FAILED" " 1 2 3" "the passwd file truncated: every node's run fails"
diag "node 1: $(nstatus 1 last_error)"
for k in $NODES; do
        like "$(nstatus "$k" last_error)" "$truncated" "node $k: the error names the truncated file"
done
kept gen2 "a file truncated"
is "$(all_status manifest_generation)" "$(repeat 2)" "every node stays at generation 2"
for k in $NODES; do
        nok "node $k: no passwd of generation 3" grep -q '^ken:' "$T/n$k/cache/passwd.cache"
        unlike "$(cat "$T/n$k/cache/group.cache")" "ken" "node $k: no group of generation 3"
done
for f in $(new_files passwd); do
        cp -a "$W/$f" "$T/staged/"
done
refresh_all
is "$FAILED" "" "the upload complete: every node's run succeeds"
converged "the upload complete"
serve "$W"
refresh_all
is "$FAILED" "" "the producer's own directory served again"
converged "and nothing changes"
snapshot gen3

# 5. The producer restored from a backup of generation 1 (its state and its
# web root): its next export is generation 2, which every node refuses.
producer_stop
cp -a "$T/export-generation.1" "$P/state/nsscache/export-generation"
rm -rf "$W" && cp -a "$T/export.1" "$W"
producer_start
user_edit grace "x['sunkLoginShell'] = '/bin/sh'"
produce
is "$(pgen)" 2 "the restored producer exports generation 2"
refresh_all
is "$FAILED" " 1 2 3" "every node refuses it"
diag "node 1: $(nstatus 1 last_error)"
for k in $NODES; do
        like "$(nstatus "$k" last_error)" "generation 2 is older than 3, the one applied" \
                "node $k: the error says the generation is older than the one applied"
        ok "node $k: sunkd is alive" kill -0 "${NODE_PID[$k]}"
done
kept gen3 "an older producer"
is "$(all_status manifest_generation)" "$(repeat 3)" "every node stays at generation 3"
for k in $NODES; do
        unlike "$(grep '^grace:' "$T/n$k/cache/passwd.cache")" ':/bin/sh$' "node $k: grace's change waits"
done

# The way out: the admin takes the highest generation the nodes applied,
# writes it to the producer's export-generation and runs a refresh: a
# generation raised past the served manifest's is exported even though the
# maps are the ones it names.
high=$(for k in $NODES; do nstatus "$k" manifest_generation; done | sort -n | tail -n 1)
is "$high" 3 "the nodes' highest generation"
printf '%s\n' "$high" > "$P/state/nsscache/export-generation"
produce
is "$(pgen)" 4 "the generation raised, the producer exports generation 4 with the same maps"
refresh_all
is "$FAILED" "" "every node accepts it"
converged "past the nodes' generation"
for k in $NODES; do
        like "$(grep '^grace:' "$T/n$k/cache/passwd.cache")" ':/bin/sh$' "node $k: grace's change arrived"
done
for k in $NODES; do
        ok "node $k: sunkd is alive" kill -0 "${NODE_PID[$k]}"
done

# 6. The producer's state directory lost, its web root kept: the served
# manifest's generation is the floor, so the fleet never goes backwards.
producer_stop
rm -f "$P/state/nsscache/export-generation"
producer_start
user_edit grace "x['sunkLoginShell'] = '/bin/zsh'"
produce
is "$(pgen)" 5 "a producer without its state exports after the served manifest's generation"
refresh_all
is "$FAILED" "" "every node accepts it"
converged "after the state was lost"

done_testing
