#!/bin/bash
# The socket under local abuse: one uid cannot take every slot, the last
# slots are kept for root and allow-listed users, a trickled request does not
# keep its connection, and a pending call learns that its caller hung up.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed to call as another user"
[ "$(id -u)" = 0 ] || bail_out "this test must run as root to call as other users"
for u in nobody daemon bin sys; do getent passwd $u >/dev/null || bail_out "user $u missing"; done
sunkd_setup
# 8 slots, 2 reserved: nobody holds 4 (its cap), bin the 2 unreserved left.
sunkd_config "max_connections: 8
reserved_connections: 2
max_connections_per_uid: 4
idle_timeout: 10m
request_timeout: 2s
modules:
  testmod:
    interval: 1h
    allow: [daemon]"
sunkd_start
chmod 755 "$T" "$T/run"
HOG="$SUNKD_SRCDIR/tests/lib/socket-hog.py"
mkdir -m 777 "$T/nobody" "$T/bin"
as() { local u=$1; shift; setpriv --reuid="$u" --regid=nogroup --clear-groups "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$HOG" "$SOCK" "$T/nobody" &
HOG_NOBODY=$!
wait_for_file "$T/nobody/held" 300 || bail_out "nobody's connections were never refused"
is "$(cat "$T/nobody/held")" "4 20" "nobody holds its 4 connections, the 21 more are refused"
setpriv --reuid=bin --regid=nogroup --clear-groups /usr/bin/python3 "$HOG" "$SOCK" "$T/bin" &
HOG_BIN=$!
wait_for_file "$T/bin/held" 300 || bail_out "bin's connections were never refused"
is "$(cat "$T/bin/held")" "2 20" "another uid gets the 2 unreserved slots left"
is "$(as sys /usr/bin/python3 "$HOG" "$SOCK" "$T" probe)" "refused" "a third uid finds only reserved slots"

t0=$(now_ms); out=$(ctl status 2>&1); rc=$?; t1=$(now_ms)
is "$rc" 0 "root's sunkctl status is answered while the socket is full"
diag "root status latency: $((t1 - t0)) ms"
t0=$(now_ms); out=$(as daemon "$SUNKCTL" -s "$SOCK" ping 2>&1); t1=$(now_ms)
is "$out" "pong" "an allow-listed uid takes a reserved slot"
diag "allow-listed ping latency: $((t1 - t0)) ms"
is "$(as sys /usr/bin/python3 "$HOG" "$SOCK" "$T" probe)" "refused" "the unprivileged are still refused"

log=$(cat "$T/sunkd.log")
is "$(grep -c 'Refusing connections from uid=65534' <<<"$log")" 1 "nobody's 21 refusals are logged once"
like "$log" "uid=65534 .*limit of connections per uid" "with the uid and the reason"
is "$(grep -c 'Refusing connections from uid=2 ' <<<"$log")" 1 "bin's refusals too"

# Trickling: a byte every 250 ms on each held connection, idle_timeout 10m.
touch "$T/nobody/go"
ok "a trickled request is closed at its deadline, not kept by each byte" wait_for_file "$T/nobody/deadline" 300
diag "trickled connection lasted $(cat "$T/nobody/deadline" 2>/dev/null) s (request_timeout 2s)"
kill "$HOG_NOBODY" "$HOG_BIN" 2>/dev/null
wait "$HOG_NOBODY" "$HOG_BIN" 2>/dev/null
# The daemon sees the hangups in its own time: probe until it has.
i=0
until [ "$(as sys /usr/bin/python3 "$HOG" "$SOCK" "$T" probe)" = answered ] || [ $i -ge 100 ]; do
        sleep 0.1; i=$((i + 1))
done
is "$(as sys /usr/bin/python3 "$HOG" "$SOCK" "$T" probe)" "answered" "slots freed are slots again"

# A pending call whose caller hangs up: the module's on-gone callback runs.
python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b'{"method":"io.sunkd.Test.Hold"}\0')
s.sendall(b'{"method":"io.sunkd.Agent.Ping"}\0')
s.close()
PY
i=0
until ctl status | grep -q "gone_calls *1$" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
like "$(ctl status)" "gone_calls +1" "the module saw its caller go"
like "$(ctl status)" "held_calls +0" "and answered (freed) the call"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
