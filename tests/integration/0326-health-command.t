#!/bin/bash
# deadline: 300
# The command check, NHC's check_cmd_output and check_cmd_status, run as a
# script is: a program whose output holds a line for each pattern and none
# for a '!' one, and exits with the status asked for, passes; a '!' pattern
# that matches fails command-match naming the line, a status that differs
# command-status, a pattern that matched nothing command-nomatch.  It runs
# under the same trust rule as a script: another uid's program is refused
# at --check-config with its line, and one that becomes another uid's after
# the start is refused at its run (command-refused) and not run.  Without
# a timeout it is killed at NHC's 5 s.  Nothing it starts outlives it.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
S="$T/scripts"
mkdir -m 755 "$S"
# smi: prints what $T/out holds, records that it ran, exits with $T/rc's status
cat > "$S/smi.sh" <<SCRIPT
#!/bin/sh
echo ran >> "$T/ran"
cat "$T/out"
exit \$(cat "$T/rc")
SCRIPT
# hang: leaves a setsid child behind, writing its pid, then hangs
cat > "$S/hang.sh" <<SCRIPT
#!/bin/sh
setsid sh -c 'echo \$\$ > "$T/child.pid"; exec sleep 1000' > /dev/null 2>&1 &
while [ ! -s "$T/child.pid" ]; do sleep 0.05; done
exec sleep 1000
SCRIPT
chmod 755 "$S/smi.sh" "$S/hang.sh"
cp -p "$S/smi.sh" "$S/theirs.sh" && chown 65534 "$S/theirs.sh"
printf 'GPU 0: H100 (UUID: GPU-1)\nGPU 1: H100 (UUID: GPU-2)\nPersistence Mode: Enabled\n' > "$T/out"
echo 0 > "$T/rc"
leftovers() { [ -s "$T/child.pid" ] && kill -KILL "$(cat "$T/child.pid")" 2> /dev/null; sunkd_cleanup; }
trap leftovers EXIT

# --- refused at --check-config, at its line
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    checks:
      - name: c
        type: command
        path: $S/theirs.sh"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "another uid's command is refused"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'path': refusing health script '$S/theirs.sh': owned by uid 65534" \
        "at its line, saying why"

sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
      - name: smi
        type: command
        path: $S/smi.sh
        match: ['^GPU 1: ', 'Persistence Mode: Enabled', '!Disabled|ERR!']
      - name: status
        type: command
        path: $S/smi.sh
        status: 3
      - name: hang
        type: command
        path: $S/hang.sh"
sunkd_start

health_run smi
is "$?" 0 "every pattern matched and none of the '!' ones: passes"
like "$(health_field smi detail)" "smi.sh exited 0: Persistence Mode: Enabled" "the detail its last line"
printf 'GPU 0: H100 (UUID: GPU-1)\nGPU 1: ERR!\nPersistence Mode: Enabled\n' > "$T/out"
health_run smi
is "$?" 1 "a '!' pattern that matches fails"
is "$(health_field smi code)" "command-match" "as command-match"
like "$(health_field smi detail)" "'Disabled\\|ERR!' matched line 2 of $S/smi.sh: GPU 1: ERR!" "naming the line"
printf 'GPU 0: H100 (UUID: GPU-1)\nPersistence Mode: Enabled\n' > "$T/out"
health_run smi
is "$?" 1 "a pattern no line matches fails"
is "$(health_field smi code)" "command-nomatch" "as command-nomatch"
like "$(health_field smi detail)" "'\\^GPU 1: ' matched no line of $S/smi.sh's output \\(1 of 3 patterns failed\\)" "naming it"
echo 2 > "$T/rc"
health_run smi
is "$?" 1 "an exit status not 0 fails"
is "$(health_field smi code)" "command-status" "as command-status"
like "$(health_field smi detail)" "smi.sh exited 2 \\(expected 0\\)" "saying what it was"
health_run status
is "$?" 1 "a status other than the one asked for fails"
like "$(health_field status detail)" "exited 2 \\(expected 3\\)" "saying both"
echo 3 > "$T/rc"
health_run status
is "$?" 0 "the status asked for passes"

# --- changed after the start: refused at its run, not run
rm -f "$T/ran"
chown 65534 "$S/smi.sh"
health_run smi
is "$?" 1 "a command now another uid's fails"
is "$(health_field smi code)" "command-refused" "as command-refused"
like "$(health_field smi detail)" "refusing health script '$S/smi.sh': owned by uid 65534" "saying why"
ok "and it did not run" test ! -e "$T/ran"
chown 0 "$S/smi.sh"

# --- NHC's 5 s timeout, and nothing left behind
health_run hang
is "$?" 1 "a command that hangs fails"
is "$(health_field hang code)" "check-timeout" "at its timeout"
like "$(health_field hang detail)" "no answer within 5.0s" "NHC's 5 s"
ok "the child it left is gone" wait_until 300 eval '! kill -0 "$(cat "$T/child.pid")" 2>/dev/null'
done_testing
