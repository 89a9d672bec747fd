#!/bin/bash
# deadline: 600
# Bytes from outside that are not UTF-8 never make an answer invalid: a
# health script that prints 0xff 0xfe and Latin-1, a node reason set by an
# admin in Latin-1 (read back through scontrol), a prolog script whose name
# and output are not UTF-8.  Every method that shows that text (Agent.Status,
# Agent.Jobs, Agent.Trigger, Health.Status, Health.Run, Health.Drain and
# Undrain, Prolog.Run through its client, Prolog.Status) answers valid JSON,
# with each such byte written "\xNN", for as long as the text is kept.
# scontrol is a stand-in here: one node whose state and reason are files.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
for m in health prolog; do
        cp "$SUNKD_BUILDDIR/modules/$m/.libs/$m.so" "$MODDIR/" || bail_out "$m.so not built"
done
B="$SUNKD_BUILDDIR/modules/prolog"
[ -x "$B/sunkd-prolog" ] || bail_out "sunkd-prolog not built"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
SETTINGS="$T/run/prolog/client.json"
NODE=ot-node-1
N="$T/node"
P="$T/p.d"
mkdir -p "$N" "$P" "$T/e.d"
chmod 755 "$N" "$P" "$T/e.d"

# The stand-in: `show node NAME` prints the node, `update` changes it.
cat > "$T/scontrol" <<EOF
#!/bin/sh
case "\$1" in
show)
        printf 'NodeName=$NODE Arch=x86_64\n   State=%s ThreadsPerCore=1\n   Partitions=debug\n' "\$(cat $N/state)"
        [ -s $N/reason ] && printf '   Reason=%s [root@2024-01-01T00:00:00]\n' "\$(cat $N/reason)"
        exit 0 ;;
update)
        for a; do
                case "\$a" in
                state=drain) echo IDLE+DRAIN > $N/state ;;
                state=resume) echo IDLE > $N/state; : > $N/reason ;;
                reason=*) printf '%s' "\${a#reason=}" > $N/reason ;;
                esac
        done
        exit 0 ;;
esac
exit 1
EOF
chmod 755 "$T/scontrol"
echo IDLE+DRAIN > "$N/state"
printf 'admin: caf\351 \377' > "$N/reason"

printf '#!/bin/sh\necho first line\nprintf "bytes \\377\\376 caf\\351 end\\n"\nexit 1\n' > "$T/bad.sh"
chmod 755 "$T/bad.sh"
# a prolog script whose name and output are not UTF-8
BADNAME=$(printf '10-caf\351')
printf '#!/bin/sh\nprintf "prolog \\377\\376 caf\\351 fails\\n"\nexit 3\n' > "$P/$BADNAME"
chmod 755 "$P/$BADNAME"

sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    transport: scontrol
    scontrol:
      path: $T/scontrol
    checks:
      - name: bad
        type: script
        path: $T/bad.sh
        action: report
  prolog:
    prolog_dir: $P
    epilog_dir: $T/e.d
    script_timeout: 30s
    total_timeout: 60s
    on_daemon_unreachable: fail"
sunkd_start
LOG_MARK=0
LOG_MARKED="$T/sunkd.log"

# raw METHOD [PARAMS]: the reply as it came, checked to be UTF-8 JSON, on one line
raw() {
        local params="${2:-}"
        [ -n "$params" ] || params='{}'
        python3 - "$SOCK" "$1" "$params" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(120)
s.connect(sys.argv[1])
s.sendall(json.dumps({"method": sys.argv[2], "parameters": json.loads(sys.argv[3])}).encode() + b"\0")
buf = b""
while b"\0" not in buf:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
msg = buf.partition(b"\0")[0]
try:
    reply = json.loads(msg.decode("utf-8", errors="strict"))
except ValueError as e:
    print("INVALID %s" % e)
    sys.exit(1)
print(json.dumps(reply, sort_keys=True))
EOF
}
# valid_escaped DESC REPLY: valid, not an InternalError, and the bytes shown escaped
valid_escaped() {
        local desc="$1" reply="$2"
        unlike "$reply" 'INVALID|InternalError' "$desc: valid JSON, no InternalError"
        like "$reply" '\\\\xff\\\\xfe caf\\\\xe9' "$desc: the bytes are escaped"
}
# json_ok DESC CMD...: sunkctl --json's output parses as JSON and holds the escaped bytes
json_ok() {
        local desc="$1" out
        shift
        out=$("$@" 2>&1)
        if printf '%s' "$out" | python3 -c 'import json,sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' 2> /dev/null; then
                _tap_result 0 "$desc: valid JSON"
        else
                _tap_result 1 "$desc: valid JSON"
                diag "$out"
        fi
        like "$out" '\\\\xff\\\\xfe caf\\\\xe9' "$desc: the bytes are escaped"
}

# --- health: a failing script check whose output is not UTF-8
# (the log, not an answer, says when: before the fix every answer failed)
wait_log "Check 'bad': fail" || bail_out "the check never ran"
json_ok "sunkctl --json health" ctl --json health
json_ok "sunkctl --json status" ctl --json status
json_ok "sunkctl --json jobs" ctl --json jobs
valid_escaped "Agent.Jobs" "$(raw io.sunkd.Agent.Jobs)"
valid_escaped "Agent.Status" "$(raw io.sunkd.Agent.Status)"
valid_escaped "Agent.Trigger wait" "$(raw io.sunkd.Agent.Trigger '{"job": "health.bad", "wait": true}')"
valid_escaped "Health.Status" "$(raw io.sunkd.Health.Status)"
valid_escaped "Health.Run" "$(raw io.sunkd.Health.Run)"
out=$(ctl status 2>&1)
like "$out" 'xff' "sunkctl status shows the check's text"

# The node's reason, an admin's in Latin-1: not ours, so a drain is refused,
# quoting it escaped, and the module's last message keeps it.
reply=$(raw io.sunkd.Health.Drain '{"reason": "test"}')
unlike "$reply" 'INVALID|InternalError' "Health.Drain over an admin's reason: valid JSON"
like "$reply" 'io.sunkd.Refused' "Health.Drain over an admin's reason: refused"
like "$reply" 'caf\\\\xe9 \\\\xff' "Health.Drain over an admin's reason: quoted escaped"
reply=$(raw io.sunkd.Health.Status)
unlike "$reply" 'INVALID|InternalError' "Health.Status after: valid JSON"
like "$reply" '"last_signal_message": "node [^}]*caf\\\\xe9 \\\\xff' "Health.Status keeps the reason escaped"

# With the reason gone, a drain and an undrain act, and answer the status.
echo IDLE > "$N/state"
: > "$N/reason"
valid_escaped "Health.Drain" "$(raw io.sunkd.Health.Drain '{"reason": "test"}')"
is "$(cat "$N/state")" "IDLE+DRAIN" "the drain was made"
valid_escaped "Health.Undrain" "$(raw io.sunkd.Health.Undrain)"
is "$(cat "$N/state")" "IDLE" "the undrain was made"

# --- prolog: a failing script with a name and output that are not UTF-8
wait_for_file "$SETTINGS" || bail_out "the module did not leave its settings for the client"
err=$(env -i SLURM_JOB_ID=77 "$B/sunkd-prolog" --socket "$SOCK" --settings "$SETTINGS" 2>&1)
is "$?" 1 "the prolog fails"
unlike "$err" 'InternalError|refused the run' "Prolog.Run answers the failure"
like "$err" '10-caf\\xe9' "the client names the script, escaped"
unlike "$err" 'did not drain' "the client's Health.Drain is answered"
like "$(cat "$N/reason")" '^sunkd: prolog 10-caf\\xe9 rc=3: prolog \\xff\\xfe caf\\xe9 fails' "the node is drained for it, escaped"
reply=$(raw io.sunkd.Prolog.Status)
valid_escaped "Prolog.Status" "$reply"
like "$reply" '"failed_script": "10-caf\\\\xe9"' "Prolog.Status: the script's name escaped"
like "$reply" '"output": "prolog \\\\xff\\\\xfe caf\\\\xe9 fails' "Prolog.Status: the output kept, escaped"
valid_escaped "sunkctl --json prolog status" "$(ctl --json prolog status 2>&1)"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
done_testing
