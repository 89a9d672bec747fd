#!/bin/bash
# Command lines: help, versions, usage errors and exit codes.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

out=$("$SUNKD" --help); rc=$?
is "$rc" 0 "sunkd --help exits 0"
like "$out" "--check-config" "sunkd --help lists --check-config"
like "$out" "--notify-fd" "sunkd --help lists --notify-fd"
like "$("$SUNKD" --version)" "^sunkd [0-9]+\.[0-9]+\.[0-9]+ \(module ABI 1\.[0-9]+\)" "sunkd --version"
"$SUNKD" --bogus >/dev/null 2>&1; is "$?" 2 "unknown option exits 2"
"$SUNKD" extra-arg >/dev/null 2>&1; is "$?" 2 "stray argument exits 2"
"$SUNKD" --notify-fd=x >/dev/null 2>&1; is "$?" 2 "bad --notify-fd exits 2"

err=$("$SUNKD" -c "$T/missing.yaml" 2>&1); rc=$?
is "$rc" 2 "missing config exits 2"
like "$err" "missing.yaml: No such file" "missing config is named"

sunkd_config "modules: {}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "--check-config accepts a valid file"
like "$out" "is valid" "--check-config says so"

out=$("$SUNKCTL" --help); rc=$?
is "$rc" 0 "sunkctl --help exits 0"
for v in status jobs run reload metrics version; do
        like "$out" "^  $v " "sunkctl --help lists $v"
done
# every verb: the modules' too, under each module, and the environment
under() { printf '%s\n' "$out" | sed -n "/^  $1 /,/^  [a-zA-Z]/p" | sed -n -E 's/^ {16}verbs: //p'; }
is "$(under health)" "status, run, drain, undrain, genconf" "sunkctl --help lists health's verbs under it"
like "$out" "^  -o, --output=FILE " "and -o"
like "$out" "^ +\(health genconf\)$" "with the verbs it is for"
is "$(under gres)" "list" "and gres's"
like "$out" "^  SUNKD_SOCKET " "sunkctl --help names SUNKD_SOCKET"
err=$("$SUNKCTL" -s "$T/none.sock" status 2>&1); rc=$?
is "$rc" 3 "sunkctl exits 3 when sunkd is not running"
like "$err" "cannot connect to $T/none.sock: .*is sunkd running\?" "and says why"
"$SUNKCTL" -s "$T/none.sock" frobnicate >/dev/null 2>&1; is "$?" 2 "unknown sunkctl command exits 2"
"$SUNKCTL" >/dev/null 2>&1; is "$?" 2 "sunkctl without a command exits 2"

done_testing
