#!/bin/bash
# Every path sunkd writes must be out of other uids' reach: gres.conf (its
# owner would choose the devices jobs get), the metrics textfile, the socket
# (a look-alike would answer sunkctl and sunkd-authkeys) and the state
# directory.  One in a directory another uid owns, or below one, or in a
# directory others may write (sticky or not) is refused by --check-config
# with the owner named, refused at start with nothing written there, and
# refused on reload while the running config stays.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
OTHER=4242
getent passwd "$OTHER" >/dev/null && bail_out "uid $OTHER is in use here; the test needs an unused uid"

cp "$DATA/nvml-h100-8.desc" "$T/nvml.desc"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
printf 'ClusterName=test\nNodeName=node-1 Gres=gpu:8\n' > "$T/slurm.conf"
export FAKE_NVML_CONFIG="$T/nvml.desc" FAKE_NVML_HANG_FILE="$T/nvml-hung"

THEIRS="$T/theirs"            # another uid's directory
UP="$T/up/mine"               # root's, in another uid's directory
mkdir -p "$THEIRS" "$UP" "$T/gw" "$T/sticky"
chmod 755 "$THEIRS" "$T/up" "$UP"
chown "$OTHER" "$THEIRS" "$T/up"
chmod 775 "$T/gw"
chmod 1777 "$T/sticky"

# conf FILE SOCKET STATE_DIR GRES_CONF INTERVAL [TOP-LEVEL LINE]
conf() {
        {
                printf 'socket: %s\nstate_dir: %s\nmodule_dir: %s\n' "$2" "$3" "$MODDIR"
                [ -n "${6:-}" ] && printf '%s\n' "$6"
                printf 'modules:\n  gres:\n    nvml_library: %s\n    root: %s\n' "$NVML" "$T/root"
                printf '    gres_conf: %s\n    slurm_conf: %s\n    node_name: node-1\n' "$4" "$T/slurm.conf"
                printf '    interval: 1h\n  testmod:\n    interval: %s\n' "$5"
        } > "$1"
        chmod 644 "$1"
}
interval() {
        ctl --json jobs | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.ok"][0]["interval_usec"])'
}

GOOD_TOP="metrics_textfile: $T/sunkd.prom"
conf "$T/sunkd.yaml" "$SOCK" "$T/state" "$T/gres.conf" 1h "$GOOD_TOP"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "paths in root's directories under /tmp are accepted"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
ok "gres.conf is written" test -s "$T/gres.conf"
is "$(interval)" 3600000000 "the daemon runs the first config"

# refused DESC DIR KEY REGEX SOCKET STATE_DIR GRES_CONF [TOP-LEVEL LINE]: a
# config with these paths is refused in all three places; nothing appears
# in DIR.  The running daemon keeps its socket and state directory in the
# reload unless the case is about them.
refused() {
        local desc="$1" dir="$2" key="$3" re="$4" sock="$5" state="$6" gres="$7" top="${8:-}" out rc
        conf "$T/h.yaml" "$sock" "$state" "$gres" 5m "$top"
        out=$("$SUNKD" -c "$T/h.yaml" --check-config 2>&1); rc=$?
        is "$rc" 2 "$desc: --check-config exits 2"
        like "$out" "$T/h.yaml:[0-9]+:[0-9]+: key '$key': $re" "$desc: the key, the path and the owner are named"
        timeout 20 "$SUNKD" -c "$T/h.yaml" > /dev/null 2>&1; rc=$?
        is "$rc" 2 "$desc: sunkd refuses to start with 2"
        is "$(ls -A "$dir")" "" "$desc: nothing is written there"
        [ "$key" = socket ] || sock="$SOCK"
        [ "$key" = state_dir ] || state="$T/state"
        [ "$key" = metrics_textfile ] || top="$GOOD_TOP"
        conf "$T/sunkd.yaml" "$sock" "$state" "$gres" 5m "$top"
        sunkd_hup
        like "$(log_since)" "key '$key': $re" "$desc: a reload is refused, saying why"
        like "$(log_since)" "keeping the running" "$desc: the running config stays"
        is "$(interval)" 3600000000 "$desc: its values are the old ones"
        ctl run gres.discover > /dev/null
        is "$(ls -A "$dir")" "" "$desc: nothing is written there after the reload"
}

refused "gres_conf in another uid's directory" "$THEIRS" gres_conf \
        "refusing to write '$THEIRS/gres.conf': '$THEIRS' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$T/run2/io.sunkd" "$T/state2" "$THEIRS/gres.conf"
refused "gres_conf two levels below another uid's directory" "$UP" gres_conf \
        "refusing to write '$UP/gres.conf': '$T/up' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$T/run2/io.sunkd" "$T/state2" "$UP/gres.conf"
refused "gres_conf in a group-writable directory" "$T/gw" gres_conf \
        "refusing to write '$T/gw/gres.conf': '$T/gw' is group- or world-writable \(owner uid 0, mode 0775\)" \
        "$T/run2/io.sunkd" "$T/state2" "$T/gw/gres.conf"
refused "gres_conf in a sticky, world-writable directory" "$T/sticky" gres_conf \
        "refusing to write '$T/sticky/gres.conf': '$T/sticky' is group- or world-writable \(owner uid 0, mode 1777\)" \
        "$T/run2/io.sunkd" "$T/state2" "$T/sticky/gres.conf"
refused "metrics_textfile in another uid's directory" "$THEIRS" metrics_textfile \
        "refusing to write '$THEIRS/sunkd.prom': '$THEIRS' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$T/run2/io.sunkd" "$T/state2" "$T/gres.conf" "metrics_textfile: $THEIRS/sunkd.prom"
refused "the socket in another uid's directory" "$THEIRS" socket \
        "refusing to write '$THEIRS/run/io.sunkd': '$THEIRS' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$THEIRS/run/io.sunkd" "$T/state2" "$T/gres.conf"
refused "the socket two levels below another uid's directory" "$UP" socket \
        "refusing to write '$UP/io.sunkd': '$T/up' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$UP/io.sunkd" "$T/state2" "$T/gres.conf"
refused "state_dir in another uid's directory" "$THEIRS" state_dir \
        "refusing to write '$THEIRS/state': '$THEIRS' is owned by uid $OTHER, not root \(mode 0755\)" \
        "$T/run2/io.sunkd" "$THEIRS/state" "$T/gres.conf"
refused "a group-writable state_dir" "$T/gw" state_dir \
        "refusing to write '$T/gw': group- or world-writable \(owner uid 0, mode 0775\)" \
        "$T/run2/io.sunkd" "$T/gw" "$T/gres.conf"

# The state directory of one module, handed to another uid.
mkdir -p "$T/state2/testmod" && chown "$OTHER" "$T/state2/testmod"
conf "$T/h.yaml" "$T/run2/io.sunkd" "$T/state2" "$T/gres.conf" 5m
out=$("$SUNKD" -c "$T/h.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a module's state directory owned by another uid is refused"
like "$out" "refusing state directory '$T/state2/testmod': owned by uid $OTHER, not root \(mode 0755\)" \
        "and named, with its owner"

conf "$T/sunkd.yaml" "$SOCK" "$T/state" "$T/gres.conf" 5m "$GOOD_TOP"
sunkd_hup
like "$(log_since)" "Configuration reloaded\." "a trusted config is reloaded"
is "$(interval)" 300000000 "with its new values"
is "$(ls -A "$THEIRS")" "" "another uid's directory was never written"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

done_testing
