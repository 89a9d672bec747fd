#!/bin/bash
# The s6 service directory from s6/ under a real s6-svscan: readiness through
# the notification fd, sunkctl against the supervised daemon, reload with
# s6-svc -h, stop with s6-svc -d, and a configuration error that the finish
# script keeps down instead of restarting it every second.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

for c in s6-svscan s6-svscanctl s6-supervise s6-svc s6-svwait s6-svstat; do
        command -v "$c" >/dev/null || bail_out "$c not found: install the Debian package s6 (make deps)"
done
[ -x "$SUNKD_BUILDDIR/s6/sunkd/run" ] || bail_out "s6/sunkd/run not built in $SUNKD_BUILDDIR"

SCAN="$T/scan"
SV="$SCAN/sunkd"
SVSCAN_PID=

s6_cleanup() {
        if [ -n "$SVSCAN_PID" ] && kill -0 "$SVSCAN_PID" 2>/dev/null; then
                s6-svc -dx "$SV" 2>/dev/null
                s6-svscanctl -t "$SCAN" 2>/dev/null
                for _ in $(seq 50); do kill -0 "$SVSCAN_PID" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$SVSCAN_PID" 2>/dev/null
        fi
        sunkd_cleanup
}
trap s6_cleanup EXIT

# The service directory as installed (run from the build, the rest as in
# the source tree), pointed at this build's sunkd and a private config.
mkdir -p "$SCAN"
cp -r "$SUNKD_SRCDIR/s6/sunkd" "$SV"
rm -f "$SV/run.in"
sed -e "s|^exec [^ ]*/sunkd |exec $SUNKD |" -e "s|--config=[^ ]*|--config=$T/sunkd.yaml|" \
        "$SUNKD_BUILDDIR/s6/sunkd/run" > "$SV/run"
chmod 755 "$SV/run"
is "$(cat "$SV/type")" longrun "type is longrun"
is "$(cat "$SV/notification-fd")" 3 "notification-fd is 3"
ok "dependencies.d/base is there for s6-rc" test -f "$SV/dependencies.d/base"
ok "finish is executable" test -x "$SV/finish"
like "$(cat "$SV/run")" "^exec $SUNKD --config=$T/sunkd.yaml --notify-fd 3\$" \
        "run execs sunkd with --notify-fd matching notification-fd (adapted to this build)"

# testmod.ok is the readiness gate, and its first run lasts until release.ok.
gate_config

s6-svscan "$SCAN" > "$T/svscan.log" 2>&1 &
SVSCAN_PID=$!
wait_for_file "$SV/supervise/status" || bail_out "s6-svscan did not start s6-supervise"
wait_for_file "$SOCK" || bail_out "the supervised sunkd did not create its socket"

ok "the gate job's first run is under way" wait_until 300 gate_running
is "$(s6-svstat -o up,ready "$SV")" "true false" "s6-svstat: up, not ready while the gate job runs"
touch "$GATE/release.ok"
ok "s6-svwait -U sees sunkd ready" s6-svwait -U -t 60000 "$SV"
is "$(job_field testmod.ok runs)" 1 "readiness came after the gate job's first run"
is "$(s6-svstat -o up,ready "$SV")" "true true" "s6-svstat: up and ready"

out=$(ctl status); rc=$?
is "$rc" 0 "sunkctl status works against the supervised sunkd"
like "$out" ", ready$" "and says it is ready"
pid=$(s6-svstat -o pid "$SV")
is "$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')" "$pid" \
        "the supervised process is sunkd itself (run execs it)"

# Reload: SIGHUP through s6-svc -h applies the edited file in place.
sed -i 's/interval: 1h/interval: 2h/' "$T/sunkd.yaml"
s6-svc -h "$SV"
reloaded() {
        ctl --json status | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["reloads"] < 1)'
}
ok "s6-svc -h makes sunkd reload" wait_until 300 reloaded
is "$(ctl --json jobs | python3 -c 'import json,sys; print([j for j in json.load(sys.stdin)["jobs"] if j["name"]=="testmod.ok"][0]["interval_usec"])')" \
        7200000000 "the new interval is in force"
is "$(s6-svstat -o pid "$SV")" "$pid" "same process after the reload"
like "$(cat "$T/svscan.log")" "Configuration reloaded" "the reload is logged on the service's output"

# Stop.
s6-svc -d "$SV"
ok "s6-svc -d stops it" s6-svwait -D -t 60000 "$SV"
is "$(s6-svstat -o up,exitcode "$SV")" "false 0" "exit status 0"
ok "the socket is removed" test ! -e "$SOCK"

# A configuration error: exit status 2, and finish keeps the service down.
printf 'bogus_key: 1\n' >> "$T/sunkd.yaml"
s6-svc -u "$SV"
down_with_2() { [ "$(s6-svstat -o up,wantedup,exitcode "$SV")" = "false false 2" ]; }
ok "a configuration error leaves the service down, wanted down, exit status 2" wait_until 300 down_with_2
# Wanted down, s6-supervise starts it again only on s6-svc -u: that state,
# not a while of watching, is what keeps it from being restarted.
is "$(s6-svstat -o up,wantedup "$SV")" "false false" "and it is not restarted"
is "$(grep -c "key 'bogus_key': unknown key" "$T/svscan.log")" 1 "sunkd ran once and named the bad key"
like "$(cat "$T/svscan.log")" "configuration error, not restarting" "finish says why it stays down"

# Fixed: s6-svc -u brings it back.
sed -i '/^bogus_key:/d' "$T/sunkd.yaml"
s6-svc -u "$SV"
ok "after the fix s6-svc -u brings it up and ready" s6-svwait -U -t 60000 "$SV"
ok "sunkctl answers again" ctl ping
s6-svc -d "$SV"
ok "and it stops again" s6-svwait -D -t 60000 "$SV"
is "$(s6-svstat -o exitcode "$SV")" 0 "exit status 0"

done_testing
