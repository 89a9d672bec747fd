#!/bin/bash
# Under systemd, stderr is a journal stream named by $JOURNAL_STREAM: sunkd
# then sends structured entries to the real systemd-journald (started here
# when none runs), which journalctl reads back by SUNKD_MODULE= and SUNKD_JOB=,
# and a prolog script's end by the job and the script; a health check's
# finding by its check, status, code and recommended action.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" "$SUNKD_BUILDDIR/modules/prolog/.libs/prolog.so" \
        "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" ||
        bail_out "authkeys.so, prolog.so and health.so not built"
# a node whose /scratch is not mounted
mkdir -p "$T/root/proc/self"
printf '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n' > "$T/root/proc/self/mountinfo"
mkdir -p "$T/prolog.d" "$T/epilog.d"
printf '#!/bin/sh\necho "GPU 3 missing"\nexit 3\n' > "$T/prolog.d/20-gpu"
chmod 755 "$T/prolog.d" "$T/epilog.d" "$T/prolog.d/20-gpu"
command -v ssh-keygen >/dev/null || bail_out "ssh-keygen (openssh-client) is needed"
ssh-keygen -q -t ed25519 -N '' -C ada@test -f "$T/ada" || bail_out "ssh-keygen"
printf 'ada:%s\n' "$(cat "$T/ada.pub")" > "$T/sshkey.cache"
FP=$(ssh-keygen -lf "$T/ada.pub" | awk '{ print $2 }')
JOURNALD=/lib/systemd/systemd-journald
for c in "$JOURNALD" systemd-cat journalctl; do
        command -v "$c" >/dev/null || bail_out "$c is needed (Debian package systemd)"
done
[ "$(id -u)" = 0 ] || bail_out "starting systemd-journald needs root"

# A journal answers when systemd-cat can connect (a socket file may be stale).
journal_up() {
        local i=0
        while ! systemd-cat -t sunkd-probe true 2>/dev/null; do
                [ $i -ge "${1:-0}" ] && return 1
                sleep 0.1
                i=$((i + 1))
        done
}
JD_PID=
if ! journal_up 0; then
        "$JOURNALD" > "$T/journald.log" 2>&1 &
        JD_PID=$!
        journal_up 100 || { sed 's/^/# /' "$T/journald.log"; bail_out "systemd-journald did not start"; }
fi
trap '[ -n "$JD_PID" ] && kill "$JD_PID" 2>/dev/null; sunkd_cleanup' EXIT

sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s
  authkeys:
    sshkey_cache: $T/sshkey.cache
  prolog:
    prolog_dir: $T/prolog.d
    epilog_dir: $T/epilog.d
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
    root: $T/root
    checks:
      - name: scratch
        type: mount
        path: /scratch"
# What systemd does for a service: stderr connected to the journal's stream
# socket, and JOURNAL_STREAM naming that socket's device and inode.
systemd-cat -t sunkd-test sh -c 'JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" -c "$1"' \
        "$SUNKD" "$T/sunkd.yaml" &
SUNKD_PID=$!
PID=$SUNKD_PID
wait_for_file "$SOCK" || bail_out "sunkd did not start under systemd-cat"
ctl run testmod.ok >/dev/null
ctl run testmod.fail >/dev/null
ctl run health.scratch >/dev/null
wait_runs authkeys.load 1 || bail_out "the sshkey map was not loaded"
"$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys" -s "$SOCK" --no-fallback ada "$FP" > "$T/answer" &
AK_PID=$!
wait $AK_PID
is "$(cat "$T/answer")" "$(cat "$T/ada.pub")" "sunkd-authkeys answered from the module"
env -i SLURM_JOB_ID=555 "$SUNKD_BUILDDIR/modules/prolog/sunkd-prolog" -s "$SOCK" \
        --no-drain 2> /dev/null
is "$?" 1 "a failing prolog ran through the module"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd ran with its stderr on the journal"
journalctl --sync 2>/dev/null || sleep 1

# This run's entries only (the journal may hold earlier ones).
j() { journalctl --no-pager "_PID=$PID" "$@"; }
last_fields() { # last_fields FIELD... -- MATCHES: the named fields of the last match, "-" if absent
        local want=()
        while [ "$1" != "--" ]; do want+=("$1"); shift; done
        shift
        j -o json "$@" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
e = json.loads(lines[-1]) if lines else {}
print(" ".join(str(e.get(k, "-")) for k in sys.argv[1:]))' "${want[@]}"
}
is "$(last_fields PRIORITY ERRNO MESSAGE -- SUNKD_MODULE=testmod SUNKD_JOB=testmod.fail)" \
   "4 5 testmod: Job 'testmod.fail' failed: Input/output error" \
   "a job's failure: SUNKD_MODULE, SUNKD_JOB, PRIORITY=warning, ERRNO"
is "$(last_fields SUNKD_MODULE SUNKD_JOB ERRNO -- MESSAGE=Stopped.)" "core - -" \
   "the core logs as SUNKD_MODULE=core, without the fields that do not apply"
is "$(j -o json SUNKD_MODULE=testmod | wc -l)" "$(j -o json SUNKD_MODULE=testmod | grep -c '"CODE_FUNC"')" \
   "every entry names its source function"
is "$(j -o json _TRANSPORT=stdout | wc -l)" 0 "nothing came through as plain stderr text"
is "$(last_fields SUNKD_USER SUNKD_FINGERPRINT SUNKD_PEER_PID -- SUNKD_MODULE=authkeys SUNKD_USER=ada)" \
   "ada $FP $AK_PID" "an exact-key answer is audited: SUNKD_USER, SUNKD_FINGERPRINT, SUNKD_PEER_PID"
key=$(awk '{ print $2 }' "$T/ada.pub")
is "$(j -o json SUNKD_MODULE=authkeys | grep -c -F -- "$key")" 0 "the key itself is never in the journal"
is "$(last_fields PRIORITY SUNKD_SLURM_JOB_ID SUNKD_SCRIPT SUNKD_PROLOG_KIND -- SUNKD_MODULE=prolog SUNKD_SCRIPT=20-gpu)" \
   "4 555 20-gpu prolog" "a prolog script's end: SUNKD_SLURM_JOB_ID, SUNKD_SCRIPT, SUNKD_PROLOG_KIND, PRIORITY=warning"
like "$(last_fields MESSAGE -- SUNKD_MODULE=prolog SUNKD_SCRIPT=20-gpu)" "GPU 3 missing" "with its output"
is "$(last_fields PRIORITY SUNKD_HEALTH_CHECK SUNKD_HEALTH_STATUS SUNKD_HEALTH_CODE SUNKD_HEALTH_REMEDY \
        -- SUNKD_MODULE=health SUNKD_HEALTH_STATUS=fail)" "4 scratch fail mount-missing reboot" \
   "a check's failure: SUNKD_HEALTH_CHECK, _STATUS, _CODE and the recommended _REMEDY, PRIORITY=warning"
ok "and there were entries at all" test "$(j -o json | wc -l)" -ge 5
done_testing
