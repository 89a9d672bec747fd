#!/bin/bash
# sunkd.yaml names the modules sunkd runs as root and every path it writes:
# only root may be able to change it.  A config owned by another uid, in a
# directory another uid owns (or any directory above), group-writable, or a
# symlink to another uid's file is refused by --check-config (exit 2, the
# owner named), at start, and on reload, where the running config stays.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed"
OTHER=4242
getent passwd "$OTHER" >/dev/null && bail_out "uid $OTHER is in use here; the test needs an unused uid"

# The config as a Kubernetes ConfigMap mounts it: a symlink to the real file,
# two directories below $T.
D1="$T/d1"
D2="$D1/d2"
C="$D2/sunkd.yaml"
mkdir -p "$D2" && chmod 755 "$D1" "$D2"
write_real() { # FILE INTERVAL
        printf 'socket: %s\nstate_dir: %s\nmodule_dir: %s\nmodules:\n  testmod:\n    interval: %s\n' \
                "$SOCK" "$T/state" "$MODDIR" "$2" > "$1"
        chmod 644 "$1"
}
write_real "$D2/real.yaml" 1h
ln -s real.yaml "$C"
interval() {
        ctl --json jobs | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.ok"][0]["interval_usec"])'
}

out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
is "$rc" 0 "a root-owned config in root-owned directories under /tmp is accepted"
sunkd_start -c "$C"
is "$(interval)" 3600000000 "the daemon runs the first config"
# From here on the file asks for another interval: a reload that took it
# would show.
write_real "$D2/real.yaml" 5m

# refused DESC REGEX: --check-config, a start and a reload all refuse the
# config as it is now, naming what is at fault.
refused() {
        local out rc
        out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
        is "$rc" 2 "$1: --check-config exits 2"
        like "$out" "$2" "$1: the message names the file and what is at fault"
        timeout 20 "$SUNKD" -c "$C" > /dev/null 2>&1; rc=$?
        is "$rc" 2 "$1: sunkd refuses to start with 2"
        sunkd_hup
        like "$(log_since)" "Failed to reload, keeping the running configuration: $2" "$1: a reload is refused"
        is "$(interval)" 3600000000 "$1: the running config stays"
        out=$(ctl reload 2>&1); rc=$?
        is "$rc" 2 "$1: sunkctl reload fails as a configuration error"
        like "$out" "the running one stays: refusing config file .*io.sunkd.ReloadFailed" "$1: with ReloadFailed, printing the error"
        is "$(ctl ping)" "pong" "$1: the daemon answers"
}

chown "$OTHER" "$D2/real.yaml"
ok "(the owner of the file can rewrite it)" setpriv --reuid "$OTHER" --regid "$OTHER" --clear-groups \
        sh -c "echo '# theirs' >> '$D2/real.yaml'"
refused "a config owned by another uid" \
        "refusing config file '$C': '$D2/real.yaml' is owned by uid $OTHER, not root \(mode 0644\)"
out=$("$SUNKD" -c "$D2/real.yaml" --check-config 2>&1)
like "$out" "refusing config file '$D2/real.yaml': owned by uid $OTHER, not root \(mode 0644\)" \
        "named directly, the file is the one at fault"
# +0: uid 0 by number; a test alongside may publish a user named "0"
chown +0 "$D2/real.yaml"

chmod 664 "$D2/real.yaml"
refused "a group-writable config" \
        "refusing config file '$C': '$D2/real.yaml' is group- or world-writable \(owner uid 0, mode 0664\)"
chmod 644 "$D2/real.yaml"

chown "$OTHER" "$D2"
ok "(the owner of the directory can put another file in its place)" setpriv --reuid "$OTHER" --regid "$OTHER" \
        --clear-groups sh -c "cp '$D2/real.yaml' '$D2/x' && mv '$D2/x' '$D2/real.yaml'"
chown +0 "$D2/real.yaml"
refused "a root-owned config in a directory another uid owns" \
        "refusing config file '$C': '$D2' is owned by uid $OTHER, not root \(mode 0755\)"
chown +0 "$D2"

chown "$OTHER" "$D1"
refused "a directory two levels up owned by another uid" \
        "refusing config file '$C': '$D1' is owned by uid $OTHER, not root \(mode 0755\)"
chown +0 "$D1"

chmod 775 "$D2"
refused "a group-writable directory" \
        "refusing config file '$C': '$D2' is group- or world-writable \(owner uid 0, mode 0775\)"
chmod 755 "$D2"

write_real "$T/theirs.yaml" 5m
chown "$OTHER" "$T/theirs.yaml"
ln -sfn "$T/theirs.yaml" "$C"
refused "a symlink to another uid's file" \
        "refusing config file '$C': '$T/theirs.yaml' is owned by uid $OTHER, not root \(mode 0644\)"
mkdir "$T/theirdir" && write_real "$T/theirdir/sunkd.yaml" 5m && chown "$OTHER" "$T/theirdir"
ln -sfn "$T/theirdir/sunkd.yaml" "$C"
refused "a symlink to a file in another uid's directory" \
        "refusing config file '$C': '$T/theirdir' is owned by uid $OTHER, not root \(mode 0755\)"
ln -sfn real.yaml "$C"

# A sticky directory (as /tmp) may be on the way: only an entry's owner can
# rename or remove it there.  An entry of another uid's there is refused.
chmod 1777 "$D1"
out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
is "$rc" 0 "a sticky, world-writable directory on the way to root's entries is accepted"
ln -s d2/real.yaml "$D1/link.yaml" && chown -h "$OTHER" "$D1/link.yaml"
out=$("$SUNKD" -c "$D1/link.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a symlink another uid owns in a sticky directory is refused"
like "$out" "refusing config file '$D1/link.yaml': owned by uid $OTHER, not root" "and named"
chmod 755 "$D1"

sunkd_hup
like "$(log_since)" "Configuration reloaded\." "once trusted again, the file is reloaded"
is "$(interval)" 300000000 "with its new interval"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

done_testing
