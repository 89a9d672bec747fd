#!/bin/bash
# The socket: its mode and group, and each method's caller policy.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed to call as another user"
[ "$(id -u)" = 0 ] || bail_out "this test must run as root to check other callers"
sunkd_setup
getent group nogroup >/dev/null || bail_out "group nogroup missing"
sunkd_config "socket_mode: \"0660\"
socket_group: nogroup
modules:
  testmod:
    interval: 1h
    allow: [daemon]"
sunkd_start
is "$(stat -c '%F %a %G' "$SOCK")" "socket 660 nogroup" "socket mode and group as configured"

as() { local u=$1; shift; setpriv --reuid="$u" --regid=nogroup --clear-groups "$@"; }
chmod 755 "$T" "$T/run"
err=$(setpriv --reuid=nobody --regid=daemon --clear-groups "$SUNKCTL" -s "$SOCK" ping 2>&1); rc=$?
is "$rc" 3 "a user outside the socket group cannot connect"
out=$(setpriv --reuid=nobody --regid=nogroup --init-groups "$SUNKCTL" -s "$SOCK" ping 2>&1)
is "$out" "pong" "a member of the socket group can"

nobody_call() { setpriv --reuid="$1" --regid=nogroup --clear-groups /usr/bin/python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call "$2"; }
like "$(nobody_call nobody io.sunkd.Agent.Status)" '"ready": true' "any uid may read status"
like "$(nobody_call nobody io.sunkd.Agent.Reload)" '"error": "io.sunkd.PermissionDenied"' "Reload is root only"
like "$(nobody_call nobody io.sunkd.Test.Root)" '"error": "io.sunkd.PermissionDenied"' "a ROOT module method refuses nobody"
like "$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Root)" '"uid": 0' "and accepts root"
like "$(nobody_call daemon io.sunkd.Test.Allowed)" '"uid": 1' "an ALLOW method accepts a listed user"
like "$(nobody_call nobody io.sunkd.Test.Allowed)" '"error": "io.sunkd.PermissionDenied"' "and refuses others"
err=$(as nobody "$SUNKCTL" -s "$SOCK" run testmod.ok 2>&1); rc=$?
is "$rc" 1 "sunkctl run as non-root fails"
like "$err" "PermissionDenied" "with PermissionDenied"
like "$err" "^sunkctl: permission denied: run as root, or be in the module's allow: list" "and says what to do"
err=$(as nobody "$SUNKCTL" -s "$SOCK" reload 2>&1); rc=$?
is "$rc" 1 "sunkctl reload as non-root fails"
like "$err" "^sunkctl: permission denied: only root may reload the configuration" "saying only root may"
unlike "$err" "allow" "not pointing at allow lists, which do not open it"
like "$(cat "$T/sunkd.log")" "Refused io.sunkd.Agent.Reload to uid=65534" "refusals are logged with the caller"
sunkd_stop
done_testing
