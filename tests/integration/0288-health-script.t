#!/bin/bash
# deadline: 300
# A script check runs only what sunkd runs everywhere: a script root's alone
# through every link.  Another uid's script stops sunkd from starting and a
# reload from taking effect, with the line of its key; a script swapped for
# another uid's, made group-writable or removed after the start is refused
# at its run, named in the check's error, and not run: the check fails and
# `sunkctl health run` exits 1.  Whatever a script leaves running, a child
# that left its session (setsid) or a double-forked one, is gone when the
# check ends, at its timeout too; a #! interpreter that is missing is the
# check's error, as it was before the script ran under a reaper.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
S="$T/scripts"
mkdir -m 755 "$S"
# good: says it ran, in $T/ran
printf '#!/bin/sh\necho ran >> "%s/ran"\necho fine\n' "$T" > "$S/good.sh"
chmod 755 "$S/good.sh"
cp -p "$S/good.sh" "$S/theirs.sh" && chown 65534 "$S/theirs.sh"
# leave: a setsid child and a double-forked one, each writing its pid, then
# exit 0 once both have; linger: the same setsid child, then hang
cat > "$S/leave.sh" <<SCRIPT
#!/bin/sh
setsid sh -c 'echo \$\$ >> "$T/all.pids"; echo \$\$ > "$T/setsid.pid"; exec sleep 1000' > /dev/null 2>&1 &
( sh -c 'echo \$\$ >> "$T/all.pids"; echo \$\$ > "$T/fork2.pid"; exec sleep 1000' > /dev/null 2>&1 & )
while [ ! -s "$T/setsid.pid" ] || [ ! -s "$T/fork2.pid" ]; do sleep 0.05; done
echo left two
SCRIPT
cat > "$S/linger.sh" <<SCRIPT
#!/bin/sh
setsid sh -c 'echo \$\$ >> "$T/all.pids"; echo \$\$ > "$T/linger.pid"; exec sleep 1000' > /dev/null 2>&1 &
while [ ! -s "$T/linger.pid" ]; do sleep 0.05; done
exec sleep 1000
SCRIPT
printf '#!/nonexistent/interpreter\n' > "$S/nointerp.sh"
chmod 755 "$S/leave.sh" "$S/linger.sh" "$S/nointerp.sh"
config() { # SCRIPT
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
      - name: s
        type: script
        path: $1
      - name: leave
        type: script
        path: $S/leave.sh
      - name: linger
        type: script
        path: $S/linger.sh
        timeout: 1s
      - name: nointerp
        type: script
        path: $S/nointerp.sh"
}
# gone PIDFILE: the process whose pid it holds no longer exists; each
# script also adds its pids to all.pids, for leftovers() below
gone() { ! kill -0 "$(cat "$1")" 2> /dev/null; }
leftovers() { # what a check left running, should it have, is killed
        [ -s "$T/all.pids" ] && kill -KILL $(cat "$T/all.pids") 2> /dev/null
        sunkd_cleanup
}
trap leftovers EXIT

# --- refused at start
config "$S/theirs.sh"
out=$(timeout 60 "$SUNKD" -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "sunkd does not start with another uid's script"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'path': refusing health script '$S/theirs.sh': owned by uid 65534" \
        "naming the key's line and why"
config "$S/missing.sh"
out=$(timeout 60 "$SUNKD" -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "nor with a missing one"
like "$out" "key 'path': $S/missing.sh: No such file or directory" "saying so"

# --- and at reload, the running config kept
config "$S/good.sh"
sunkd_start
ctl run health.s > /dev/null
is "$?" 0 "root's script runs and passes"
ok "having run" test -s "$T/ran"
config "$S/theirs.sh"
sunkd_hup
like "$(log_since)" "key 'path': refusing health script '$S/theirs.sh': owned by uid 65534" "a reload to another uid's script is refused"
rm -f "$T/ran"
ctl run health.s > /dev/null
is "$?" 0 "the running check is kept"
ok "and runs root's script" test -s "$T/ran"

# --- a script changed after the start is refused at its run, not run
rm -f "$T/ran"
chown 65534 "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 1 "a script now another uid's fails the check"
is "$(health_field s code)" "script-refused" "its code says it was refused"
like "$(health_field s detail)" "refusing health script '$S/good.sh': owned by uid 65534" "its detail names the script and why"
ok "and it did not run" test ! -e "$T/ran"
chown 0 "$S/good.sh"
chmod 775 "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 1 "a group-writable one too"
like "$(health_field s detail)" "'$S/good.sh': group- or world-writable" "saying so"
ok "not run either" test ! -e "$T/ran"
chmod 755 "$S/good.sh"
mv "$S/good.sh" "$S/gone.sh"
ctl health run > /dev/null
is "$?" 1 "a script removed since fails sunkctl health run"
is "$(health_field s result)" "fail" "the check fails (not unknown)"
like "$(health_field s detail)" "$S/good.sh: No such file or directory" "naming the script"
mv "$S/gone.sh" "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 0 "put back, it passes again"
ok "having run" test -s "$T/ran"

# --- nothing a check starts outlives it (the files are of this run, not of
# the first that followed the start)
rm -f "$T/setsid.pid" "$T/fork2.pid" "$T/linger.pid"
ctl run health.leave > /dev/null
is "$?" 0 "a script that leaves two processes behind passes"
is "$(health_field leave detail)" "left two" "with its last line"
ok "its setsid child wrote its pid" test -s "$T/setsid.pid"
ok "so did its double-forked one" test -s "$T/fork2.pid"
ok "the setsid child is gone once the check has ended" wait_until 100 gone "$T/setsid.pid"
ok "the double-forked one too" wait_until 100 gone "$T/fork2.pid"
ctl run health.linger > /dev/null
is "$?" 1 "a script that hangs fails at its timeout"
is "$(health_field linger code)" "check-timeout" "saying so"
ok "its setsid child is gone too" wait_until 100 gone "$T/linger.pid"
ctl run health.nointerp > /dev/null
is "$?" 1 "a script whose interpreter is missing fails"
is "$(health_field nointerp code)" "script-exec" "as one that cannot be run"
like "$(health_field nointerp detail)" "cannot run $S/nointerp.sh: No such file or directory" "saying why"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
