#!/bin/bash
# deadline: 600
# sunkd.socket: systemd-analyze verify finds nothing to report in it, the
# service and the prolog drop-in together; its ListenStream, SocketMode and
# SocketGroup are what sunkd.yaml says by default, so sunkd, given that
# socket by systemd-socket-activate as systemd would give it, serves it
# without a warning; and the service keeps /run/sunkd (the socket's
# directory) across its own restarts and is enabled with the socket.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
ACTIVATE=$(command -v systemd-socket-activate) ||
        bail_out "systemd-socket-activate is not installed (apt-get install systemd)"
command -v systemd-analyze >/dev/null || bail_out "systemd-analyze not found: install the Debian package systemd (make deps)"
sunkd_setup
U="$SUNKD_BUILDDIR/systemd"
for f in sunkd.service sunkd.socket prolog.conf; do
        [ -f "$U/$f" ] || bail_out "systemd/$f not built in $SUNKD_BUILDDIR"
done

# 1. The three files as installed, ExecStart pointed at this build's sunkd and
# the man pages of Documentation= on MANPATH.
mkdir -p "$T/unit/sunkd.service.d" "$T/man/man1" "$T/man/man5" "$T/man/man8"
for p in sunkctl.1 sunkd.yaml.5 sunkd.8; do
        cp "$SUNKD_BUILDDIR/man/$p" "$T/man/man${p##*.}/" || bail_out "man/$p not built"
done
sed -e "s|^ExecStart=[^ ]*|ExecStart=$SUNKD|" "$U/sunkd.service" > "$T/unit/sunkd.service"
cp "$U/sunkd.socket" "$T/unit/" && cp "$U/prolog.conf" "$T/unit/sunkd.service.d/"
out=$(MANPATH="$T/man:" SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$T/unit/sunkd.socket" "$T/unit/sunkd.service" 2>&1)
is "$?:$out" "0:" "systemd-analyze verify: socket, service and drop-in are clean"

get() { sed -n "s/^$1=//p" "$2"; }
is "$(get RuntimeDirectoryPreserve "$U/sunkd.service")" yes "the service keeps /run/sunkd, where the socket unit's socket is"
is "$(get Also "$U/sunkd.service")" sunkd.socket "enabling the service enables the socket"
is "$(get WantedBy "$U/sunkd.socket")" sockets.target "the socket is wanted by sockets.target"

# 2. The unit's socket settings against sunkd.yaml's defaults.
listen=$(get ListenStream "$U/sunkd.socket") mode=$(get SocketMode "$U/sunkd.socket") group=$(get SocketGroup "$U/sunkd.socket")
default_socket=$(sed -n -E 's/^#socket: (.*)/\1/p' "$SUNKD_SRCDIR/etc/sunkd.yaml")
default_mode=$(sed -n -E 's/^#socket_mode: "(.*)"/\1/p' "$SUNKD_SRCDIR/etc/sunkd.yaml")
[ -n "$default_socket" ] && [ -n "$default_mode" ] || bail_out "no socket defaults in etc/sunkd.yaml"
is "$listen" "$default_socket" "ListenStream is sunkd.yaml's default socket"
is "$mode" "$default_mode" "SocketMode is its default socket_mode"
is "$group" root "SocketGroup is root's, as a socket sunkd binds without socket_group"
like "$(sed -n -E 's/.*-s, --socket=PATH.*default ([^)]*)\).*/\1/p' <("$SUNKCTL" --help))" "^$listen$" \
        "sunkctl looks there by default"

# 3. sunkd given the unit's socket (moved under $T) serves it and warns of
# nothing: the settings agree.
ASOCK="$T/activation/io.sunkd"
mkdir -p "$T/activation"
sunkd_config "modules:
  testmod:
    interval: 1h"
sed -i "s|^socket: .*|socket: $ASOCK|" "$T/sunkd.yaml"
LOG="$T/sunkd.log"
"$ACTIVATE" -l "$ASOCK" -- "$SUNKD" -c "$T/sunkd.yaml" 2> "$LOG" &
SUNKD_PID=$!
LOG_MARK=0 LOG_MARKED="$LOG"
wait_log "Listening on $ASOCK as 3\." || bail_out "systemd-socket-activate did not listen: $(cat "$LOG")"
chmod "$mode" "$ASOCK" && chgrp "$group" "$ASOCK" || bail_out "cannot give the socket the unit's mode and group"
is "$("$SUNKCTL" -s "$ASOCK" --timeout 60 ping 2>&1)" pong "the first client starts sunkd on the unit's socket"
ok "sunkd serves it" wait_log "Ready: 1 module\(s\), socket '$ASOCK'\."
nok "with no warning about the socket" log_since_has "warning: The socket passed"
kill -TERM "$SUNKD_PID"
wait_until 600 sh -c "! kill -0 $SUNKD_PID 2>/dev/null" || diag "sunkd ignored SIGTERM"
wait "$SUNKD_PID"
is "$?" 0 "SIGTERM stops it cleanly"
SUNKD_PID=

done_testing
