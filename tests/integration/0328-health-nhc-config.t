#!/bin/bash
# deadline: 300
# NHC's process, command and port checks in sunkd.yaml: each key a type
# cannot take refused by --check-config at its check's line, saying which
# key and why, and nothing started; then process_limit against a real
# process: a busy loop of an unprivileged uid fails max_time once it has
# used its second of CPU and max_cpu_percent while it spins, and passes
# once it is gone; its physmem stays under the limit asked.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
refused() { # DESCRIPTION PATTERN CHECK
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    checks:
      - {name: ok, type: memory, min_total: 1M}
$3"
        out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
        is "$?" 2 "$1: refused"
        like "$out" "sunkd.yaml:10:[0-9]+: $2" "$1: at its line, saying why"
}
refused "process_limit without a limit" "key 'max_cpu_percent': a limit is required" \
        "      - {name: a, type: process_limit, user: root}"
refused "process_limit with a bad regex" "key 'match': '\\(' is not a POSIX extended regular expression" \
        "      - {name: a, type: process_limit, max_time: 1m, match: '('}"
refused "process_limit with both physmem limits" "key 'max_physmem_percent': max_physmem or max_physmem_percent, not both" \
        "      - {name: a, type: process_limit, max_physmem: 1G, max_physmem_percent: 5}"
refused "process_limit with a CPU time under a second" "key 'max_time': at least 1s" \
        "      - {name: a, type: process_limit, max_time: 10ms}"
refused "process_limit with a percent over range" "key 'max_physmem_percent'" \
        "      - {name: a, type: process_limit, max_physmem_percent: 101}"
refused "user_processes with an unknown user" "key 'allowed_users': no user 'no-such-user-sunkd'" \
        "      - {name: a, type: user_processes, allowed_users: [root, no-such-user-sunkd]}"
refused "user_processes with a path for a name" "key 'ignore_processes': '/usr/bin/x' is not a process name" \
        "      - {name: a, type: user_processes, ignore_processes: [/usr/bin/x]}"
refused "tcp_port without a port" "key 'port'" \
        "      - {name: a, type: tcp_port}"
refused "tcp_port with a host name" "key 'address': 'localhost' is not an IPv4 or IPv6 address" \
        "      - {name: a, type: tcp_port, port: 22, address: localhost}"
refused "tcp_port with a port out of range" "key 'port'" \
        "      - {name: a, type: tcp_port, port: 65536}"
refused "command with a bad regex" "key 'match': '\\[' is not a POSIX extended regular expression" \
        "      - {name: a, type: command, path: /bin/true, match: ['![']}"
refused "command with a status out of range" "key 'status'" \
        "      - {name: a, type: command, path: /bin/true, status: 300}"
refused "command without a path" "key 'path'" \
        "      - {name: a, type: command, match: [x]}"

# --- process_limit on a real process
command -v setpriv > /dev/null || bail_out "setpriv is needed (util-linux)"
setpriv --reuid 65533 --regid 65533 --clear-groups sh -c 'while :; do :; done' &
BUSY=$!
trap 'kill -KILL $BUSY 2>/dev/null; sunkd_cleanup' EXIT
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
      - {name: time, type: process_limit, max_time: 1s, user: 65533, max_system_uid: 999}
      - {name: cpu, type: process_limit, max_cpu_percent: 20, user: 65533, max_system_uid: 999}
      - {name: rss, type: process_limit, max_physmem: 1G, user: 65533, max_system_uid: 999}
      - {name: sys, type: process_limit, max_time: 1s, user: 65533, max_system_uid: 65533}"
sunkd_start
ok "the busy loop fails max_time once it has used a second of CPU" \
        wait_until 1200 eval '! ctl run health.time > /dev/null'
is "$(health_field time code)" "process_limit-time" "as process_limit-time"
like "$(health_field time detail)" "\\(pid $BUSY\\) of uid 65533 using 0:0[1-9] of CPU time \\(limit 0:01\\)" "naming it"
ok "and max_cpu_percent while it spins" wait_until 1200 eval '! ctl run health.cpu > /dev/null'
is "$(health_field cpu code)" "process_limit-cpu" "as process_limit-cpu"
ctl run health.rss > /dev/null
is "$?" 0 "its resident memory is under 1G"
ctl run health.sys > /dev/null
is "$?" 0 "a system user's (max_system_uid) is not looked at"
kill -KILL "$BUSY"
wait "$BUSY" 2>/dev/null
ctl run health.time > /dev/null
is "$?" 0 "once it is gone the check passes"
like "$(health_field time detail)" "no process of uid 65533 over its limit" "saying so"
done_testing
