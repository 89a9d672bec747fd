#!/bin/bash
# deadline: 300
# A script check runs only what sunkd runs everywhere: a script root's alone
# through every link.  Another uid's script stops sunkd from starting and a
# reload from taking effect, with the line of its key; a script swapped for
# another uid's, made group-writable or removed after the start is refused
# at its run, named in the check's error, and not run: the check fails and
# `sunkctl health run` exits 1.
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
config() { # SCRIPT
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
      - name: s
        type: script
        path: $1"
}
check_field() { # FIELD
        ctl --json health | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["checks"] if c["name"] == "s"][0]
print(c[sys.argv[1]])' "$1"
}

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
is "$(wc -l < "$T/ran")" 1 "it ran once"
config "$S/theirs.sh"
sunkd_hup
like "$(log_since)" "key 'path': refusing health script '$S/theirs.sh': owned by uid 65534" "a reload to another uid's script is refused"
ctl run health.s > /dev/null
is "$?" 0 "the running check is kept"
is "$(wc -l < "$T/ran")" 2 "and runs root's script"

# --- a script changed after the start is refused at its run, not run
rm -f "$T/ran"
chown 65534 "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 1 "a script now another uid's fails the check"
is "$(check_field code)" "script-refused" "its code says it was refused"
like "$(check_field detail)" "refusing health script '$S/good.sh': owned by uid 65534" "its detail names the script and why"
ok "and it did not run" test ! -e "$T/ran"
chown 0 "$S/good.sh"
chmod 775 "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 1 "a group-writable one too"
like "$(check_field detail)" "'$S/good.sh': group- or world-writable" "saying so"
ok "not run either" test ! -e "$T/ran"
chmod 755 "$S/good.sh"
mv "$S/good.sh" "$S/gone.sh"
ctl health run > /dev/null
is "$?" 1 "a script removed since fails sunkctl health run"
is "$(check_field result)" "fail" "the check fails (not unknown)"
like "$(check_field detail)" "$S/good.sh: No such file or directory" "naming the script"
mv "$S/gone.sh" "$S/good.sh"
ctl run health.s > /dev/null
is "$?" 0 "put back, it passes again"
is "$(wc -l < "$T/ran")" 1 "having run"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
