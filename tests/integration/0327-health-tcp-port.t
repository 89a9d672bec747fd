#!/bin/bash
# deadline: 300
# The tcp_port check against real listeners: a python3 listening on
# 127.0.0.1 (and on ::1 where the host has IPv6) passes a check of its port
# and address, of its process name, and of another address its wildcard
# listener takes; a check naming another process fails tcp_port-owner
# naming the holder; once the listener is gone the port check fails
# tcp_port-closed and a `listening: false` check passes, which failed
# tcp_port-open while it listened.  `sunkctl health genconf` proposes the
# port a root process named sshd listens on, and the check it writes passes.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh" # slurm_free_port
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
P=$(slurm_free_port)
W=$(slurm_free_port)
# listen ADDR PORT FAMILY READYFILE: a listener that writes READYFILE once listening
listen() {
        python3 -c '
import socket, sys, time
addr, port, fam, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if len(sys.argv) > 5:  # the name its comm takes (PR_SET_NAME)
    import ctypes
    ctypes.CDLL(None).prctl(15, sys.argv[5].encode(), 0, 0, 0)
s = socket.socket(socket.AF_INET6 if fam == "6" else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if fam == "6":
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind((addr, port))
s.listen(4)
open(ready, "w").write("up\n")
while True:
    time.sleep(1000)' "$@" &
}
listeners=
cleanup() { [ -n "$listeners" ] && kill $listeners 2>/dev/null; sunkd_cleanup; }
trap cleanup EXIT
listen 127.0.0.1 "$P" 4 "$T/up4"
listeners="$listeners $!"
L4=$!
listen 0.0.0.0 "$W" 4 "$T/upw"
listeners="$listeners $!"
G=$(slurm_free_port)
listen 127.0.0.1 "$G" 4 "$T/upg" sshd
listeners="$listeners $!"
ok "a listener named sshd is up" wait_for_file "$T/upg" 300
ok "the listener on 127.0.0.1 is up" wait_for_file "$T/up4" 300
ok "the wildcard one too" wait_for_file "$T/upw" 300
have6=0
if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
        have6=1
        listen ::1 "$P" 6 "$T/up6"
        listeners="$listeners $!"
        L6=$!
        ok "the listener on ::1 is up" wait_for_file "$T/up6" 300
fi
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
      - {name: port, type: tcp_port, port: $P}
      - {name: port-addr, type: tcp_port, port: $P, address: 127.0.0.1, process: python3}
      - {name: port-other, type: tcp_port, port: $P, address: 127.0.0.2}
      - {name: wild, type: tcp_port, port: $W, address: 127.0.0.2}
      - {name: port-sshd, type: tcp_port, port: $P, process: sshd}
      - {name: closed, type: tcp_port, port: $P, listening: false}
      - {name: port6, type: tcp_port, port: $P, address: '::1'}"
sunkd_start

health_run port
is "$?" 0 "a port listening on 127.0.0.1 passes"
like "$(health_field port detail)" "TCP port $P is listening on" "saying where"
health_run port-addr
is "$?" 0 "so does the check of its address and process"
like "$(health_field port-addr detail)" "held by 'python3' \\(pid $L4\\)" "naming the listener's pid"
health_run port-other
is "$?" 1 "another address fails"
is "$(health_field port-other code)" "tcp_port-closed" "as closed"
health_run wild
is "$?" 0 "a wildcard listener takes any address of its family"
health_run port-sshd
is "$?" 1 "a process that does not hold it fails"
is "$(health_field port-sshd code)" "tcp_port-owner" "with the owner's code"
like "$(health_field port-sshd detail)" "held by 'python3', not 'sshd'" "naming who holds it"
health_run closed
is "$?" 1 "listening: false fails while it listens"
is "$(health_field closed code)" "tcp_port-open" "as open"
if [ "$have6" = 1 ]; then
        health_run port6
        is "$?" 0 "the port on ::1 passes"
        like "$(health_field port6 detail)" "listening on ::1" "from /proc/net/tcp6"
        kill "$L6"
        wait "$L6" 2>/dev/null
        health_run port6
        is "$?" 1 "once it is gone, the ::1 check fails"
        is "$(health_field port6 code)" "tcp_port-closed" "as closed"
        health_run port
        is "$?" 0 "while 127.0.0.1's still passes"
else
        health_run port6
        is "$?" 1 "without IPv6 on the host the ::1 check fails"
        like "$(health_field port6 code)" "tcp_port-(closed|input-missing)" "as closed or unknown"
fi
# --- a baseline: the port of the root process named sshd
out=$(ctl health genconf 2>&1)
is "$?" 0 "health genconf answers"
like "$out" "  - \\{name: tcp-$G, type: tcp_port, port: $G, process: sshd\\}" "proposing sshd's port"
unlike "$out" "port: $P," "and not another process's"
sunkd_stop
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    checks:
$(grep "name: tcp-$G," <<< "$out" | sed "s/^  /      /")
      - {name: port, type: tcp_port, port: $P}
      - {name: closed, type: tcp_port, port: $P, listening: false}"
sunkd_start
health_run "tcp-$G"
is "$?" 0 "the check it proposed passes"
like "$(health_field "tcp-$G" detail)" "held by 'sshd'" "held by sshd"

kill "$L4"
wait "$L4" 2>/dev/null
health_run port
is "$?" 1 "then the port check fails"
is "$(health_field port code)" "tcp_port-closed" "as closed"
like "$(health_field port detail)" "nothing listens on TCP port $P" "saying so"
health_run closed
is "$?" 0 "and listening: false passes"
done_testing
