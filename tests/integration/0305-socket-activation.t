#!/bin/bash
# sunkd under socket activation, with the real systemd-socket-activate: the
# first client starts it and is answered on the passed socket; sunkd binds
# no socket of its own, says where it serves, warns where sunkd.yaml's
# socket settings differ from the passed socket, notifies readiness, and
# leaves the socket in place when it stops.  A socket kept open across a
# restart (as systemd keeps a .socket unit's) serves a client that connected
# while no sunkd ran.  A passed fd that cannot be the control socket is
# refused with the reason, exit status 2 (restarting does not help), and no
# fallback to sunkd.yaml's socket.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
ACTIVATE=$(command -v systemd-socket-activate) ||
        bail_out "systemd-socket-activate is not installed (apt-get install systemd)"
sunkd_setup
LISTENER= HOLDER= WAITER= ACTIVATOR=
cleanup() {
        local p
        for p in "$WAITER" "$SUNKD_PID" $(cat "$T"/pid.* 2>/dev/null) "$HOLDER" "$ACTIVATOR" "$LISTENER"; do
                [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
        done
        sunkd_cleanup
}
trap cleanup EXIT
ASOCK="$T/activation/io.sunkd" # the socket the service manager passes; sunkd.yaml's is $SOCK
mkdir -p "$T/activation"
LOG="$T/sunkd.log"
LOG_MARK=0 LOG_MARKED="$LOG"
config() {
        sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s
    ready_gate: true"
        [ -n "${1:-}" ] || return 0
        sed -i "s|^socket: .*|socket: $1|" "$T/sunkd.yaml"
        echo "socket_mode: \"$2\"" >> "$T/sunkd.yaml"
}
actl() { "$SUNKCTL" -s "$ASOCK" --timeout 60 "$@"; }
status_field() {
        actl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}
# Our child $1 is gone or a zombie.
exited() { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; }
# SIGTERM to our child $1, then its exit status in $rc; KILL if it takes a minute.
stop_child() {
        kill -TERM "$1"
        wait_until 600 exited "$1" || { diag "pid $1 ignored SIGTERM"; kill -KILL "$1"; }
        wait "$1"
        rc=$?
}
notify_has() { grep -E -q -- "$1" "$T/notify.log" 2>/dev/null; }
# $1 connections wait in $ASOCK's queue: /proc/net/unix lists each as a
# socket with the listener's path in state 02 (connecting: not accepted).
queued() { [ "$(awk -v p="$ASOCK" '$6 == "02" && $8 == p' /proc/net/unix | wc -l)" = "$1" ]; }

# 1. Activated by its first client, on a socket sunkd.yaml does not name.
python3 "$SUNKD_SRCDIR/tests/lib/notify-listen.py" "$T/notify.sock" "$T/notify.log" &
LISTENER=$!
wait_for_file "$T/notify.sock" || bail_out "notify listener did not start"
getent group nogroup >/dev/null || bail_out "no group nogroup"
config
echo "socket_group: nogroup" >> "$T/sunkd.yaml"
"$ACTIVATE" -l "$ASOCK" -E NOTIFY_SOCKET="$T/notify.sock" -- "$SUNKD" -c "$T/sunkd.yaml" 2> "$LOG" &
SUNKD_PID=$! # systemd-socket-activate execs sunkd in its place
wait_log "Listening on $ASOCK as 3\." || bail_out "systemd-socket-activate did not listen: $(cat "$LOG")"
# The service manager's choice, as SocketMode=0640 and SocketGroup=root would make it.
chmod 640 "$ASOCK" && chgrp root "$ASOCK" || bail_out "cannot set the socket's mode and group"
out=$(actl version 2>&1); rc=$?
is "$rc" 0 "the first client starts sunkd and is answered"
like "$out" "^sunkd [0-9]" "with sunkd's version"
is "$(status_field pid)" "$SUNKD_PID" "sunkd runs in place of systemd-socket-activate"
ok "READY=1 reaches NOTIFY_SOCKET once the readiness job ran" wait_until 300 notify_has "READY=1"
is "$(SOCK=$ASOCK job_field testmod.ok runs)" 1 "the module's job ran"
ok "sunkd binds no socket of its own" test ! -e "$SOCK" -a ! -e "$T/run"
is "$(status_field socket)" "$ASOCK" "status names the socket sunkd serves"
ok "so does the readiness line" log_since_has "Ready: 1 module\(s\), socket '$ASOCK'\."
ok "a warning names both paths" log_since_has \
        "warning: The socket passed by the service manager is '$ASOCK', not sunkd.yaml's '$SOCK': clients using that path will not reach sunkd\."
ok "the mode sunkd.yaml's socket_mode would have given" log_since_has \
        "warning: The socket passed by the service manager has mode 0640, not sunkd.yaml's socket_mode 0666\."
ok "and the group of its socket_group" log_since_has \
        "warning: The socket passed by the service manager has group 0, not sunkd.yaml's socket_group 'nogroup'\."
stop_child "$SUNKD_PID"
is "$rc" 0 "SIGTERM stops it cleanly"
SUNKD_PID=
ok "STOPPING=1 on SIGTERM" wait_until 300 notify_has "STOPPING=1"
ok "the passed socket stays where the service manager put it" test -S "$ASOCK"
kill "$LISTENER"
wait "$LISTENER" 2>/dev/null
LISTENER=

# 2. Stop and start again on the same socket, held open by its owner as
# systemd holds a .socket unit's: systemd-socket-activate passes it to a
# shell that starts sunkd twice, each with LISTEN_PID its own pid.  This
# time sunkd.yaml names the same path and mode: no warning.
rm -f "$ASOCK"
: > "$LOG"
"$ACTIVATE" -l "$ASOCK" -- "$BASH" -c '
        T=$1 SUNKD=$2
        for i in 1 2; do
                (echo "$BASHPID" > "$T/pid.$i.new"; mv "$T/pid.$i.new" "$T/pid.$i"; export LISTEN_PID=$BASHPID; exec "$SUNKD" -c "$T/sunkd.yaml")
                echo "$?" > "$T/exit.$i.new"; mv "$T/exit.$i.new" "$T/exit.$i"
                while [ "$i" = 1 ] && [ ! -e "$T/restart" ]; do
                        [ -d "$T" ] || exit 1
                        sleep 0.1
                done
        done' holder "$T" "$SUNKD" 2>> "$LOG" &
HOLDER=$!
wait_log "Listening on $ASOCK as 3\." || bail_out "systemd-socket-activate did not listen: $(cat "$LOG")"
config "$ASOCK" "0$(stat -c %a "$ASOCK")"
out=$(actl version 2>&1); rc=$?
is "$rc" 0 "the first client starts the first sunkd"
wait_for_file "$T/pid.1" || bail_out "no first sunkd"
pid1=$(cat "$T/pid.1")
is "$(status_field pid)" "$pid1" "it serves the passed socket"
ok "it gets ready" wait_log "Ready: 1 module\(s\), socket '$ASOCK'\."
nok "no warning when sunkd.yaml's socket settings are the passed socket's" log_since_has "warning: The socket passed"
kill -TERM "$pid1"
ok "the first sunkd stops" wait_for_file "$T/exit.1"
is "$(cat "$T/exit.1")" 0 "cleanly"
ok "the socket stays" test -S "$ASOCK"
"$SUNKCTL" -s "$ASOCK" --timeout 120 --json status > "$T/queued.out" 2>&1 &
WAITER=$!
ok "a client connects while no sunkd runs, and waits in the socket's queue" wait_until 300 queued 1
touch "$T/restart"
wait "$WAITER"
is "$?" 0 "the second sunkd, on the same socket, answers it"
WAITER=
wait_for_file "$T/pid.2" || bail_out "no second sunkd"
pid2=$(cat "$T/pid.2")
like "$(cat "$T/queued.out")" "\"pid\": *$pid2[,}]" "from the second sunkd"
is "$(actl ping)" pong "and goes on serving"
ok "the socket of sunkd.yaml was never bound" test ! -e "$T/run"
kill -TERM "$pid2"
ok "the second sunkd stops" wait_for_file "$T/exit.2"
is "$(cat "$T/exit.2")" 0 "cleanly"
wait "$HOLDER"
HOLDER=
rm -f "$T"/pid.*

# 3. What cannot be the control socket is refused; sunkd does not fall
# back to listening on sunkd.yaml's socket.
config
# refused LABEL REASON-REGEX: sunkd's exit status and log of the last attempt.
refused() {
        is "$rc" 2 "$1: exit status 2"
        like "$(cat "$LOG")" "$2" "$1: the reason is logged"
        ok "$1: no socket of sunkd.yaml's is bound" test ! -e "$T/run"
        unlike "$(cat "$LOG")" "Ready" "$1: never ready"
}
# activate_once ARGS...: systemd-socket-activate ARGS -- sunkd, started by
# the next connection; finish: sunkd's exit status in $rc.  A sunkd that
# took what it must refuse would serve on: timeout ends it (status 124).
activate_once() {
        : > "$LOG"
        rm -rf "$T/a"
        mkdir -p "$T/a"
        timeout 120 "$ACTIVATE" "$@" -- "$SUNKD" -c "$T/sunkd.yaml" 2> "$LOG" &
        ACTIVATOR=$!
        wait_log "Listening on .* as 3\." || bail_out "systemd-socket-activate did not listen: $(cat "$LOG")"
}
finish() {
        wait "$ACTIVATOR"
        rc=$?
        ACTIVATOR=
}
connect() { # connect FAMILY TYPE ADDRESS
        python3 - "$@" <<'PY'
import socket, sys
fam = {"unix": socket.AF_UNIX, "inet": socket.AF_INET}[sys.argv[1]]
typ = {"stream": socket.SOCK_STREAM, "dgram": socket.SOCK_DGRAM, "seqpacket": socket.SOCK_SEQPACKET}[sys.argv[2]]
addr = sys.argv[3] if fam == socket.AF_UNIX else ("127.0.0.1", int(sys.argv[3]))
s = socket.socket(fam, typ)
if typ == socket.SOCK_DGRAM:
    s.sendto(b"x", addr)
else:
    s.connect(addr)
PY
}
MSG="The socket passed by the service manager cannot be the control socket"

activate_once -l "$T/a/dgram" -d
connect unix dgram "$T/a/dgram"
finish
refused "a datagram socket" "$MSG: it is not a stream socket"

activate_once -l "$T/a/seqpacket" --seqpacket
connect unix seqpacket "$T/a/seqpacket"
finish
refused "a seqpacket socket" "$MSG: it is not a stream socket"

# A TCP port free a moment ago; taken meanwhile, the activator cannot listen.
for try in 1 2 3 4 5; do
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        : > "$LOG"
        timeout 120 "$ACTIVATE" -l "127.0.0.1:$port" -- "$SUNKD" -c "$T/sunkd.yaml" 2> "$LOG" &
        ACTIVATOR=$!
        wait_log "Listening on .* as 3\.|Failed" || bail_out "systemd-socket-activate did not start: $(cat "$LOG")"
        log_since_has "Listening on" && break
        finish
done
[ -n "$ACTIVATOR" ] || bail_out "no free TCP port on 127.0.0.1 in 5 tries"
connect inet stream "$port"
finish
refused "a TCP socket" "$MSG: it is not a unix socket"

# --accept passes each connection, not the listening socket: sunkd runs in
# a child; the activator logs its exit status.
activate_once -l "$T/a/accept" -a
connect unix stream "$T/a/accept"
ok "--accept: the child exits" wait_log "Child [0-9]+ died with code"
like "$(cat "$LOG")" "Child [0-9]+ died with code 2" "--accept: exit status 2"
like "$(cat "$LOG")" "$MSG: it is not listening" "--accept: the reason is logged"
ok "--accept: no socket of sunkd.yaml's is bound" test ! -e "$T/run"
kill "$ACTIVATOR"
finish

activate_once -l "$T/a/one" -l "$T/a/two"
connect unix stream "$T/a/one"
finish
refused "two sockets" "Expected at most one socket from the service manager, got 2"

# Not a socket at all: only a broken service manager passes that, so no
# activator does; the protocol is two variables and fd 3.
: > "$LOG"
timeout 120 "$BASH" -c 'export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" -c "$1" 3< "$1"' "$SUNKD" "$T/sunkd.yaml" 2> "$LOG"
rc=$?
refused "a regular file" "$MSG: it is not a socket"

done_testing
