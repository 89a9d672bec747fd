#!/bin/bash
# Hostile clients: each gets an error and is closed; everyone else is served.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "idle_timeout: 1s
modules:
  testmod:
    interval: 1h"
sunkd_start
raw() { python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" "$@"; }

is "$(raw raw '{"method":"io.sunkd.Agent.Ping"}\x00')" "ok closed=False" "a good call is answered and the connection kept"
is "$(raw raw '{"method":"io.sunkd.Nope.Nothing"}\x00')" "org.varlink.service.MethodNotFound closed=False" "unknown method"
is "$(raw raw 'not json\x00')" "io.sunkd.InvalidMessage closed=True" "garbage: error, then closed"
is "$(raw raw '[1,2]\x00')" "io.sunkd.InvalidMessage closed=True" "a non-object message"
is "$(raw raw '{"method":"io.sunkd.Agent.Ping","method":"io.sunkd.Agent.Reload"}\x00')" "io.sunkd.InvalidMessage closed=True" "duplicate keys"
is "$(raw raw '{"method":"io.sunkd.Agent.Ping","parameters":{"a":"\xff\xfe"}}\x00')" "io.sunkd.InvalidMessage closed=True" "non-UTF-8"
is "$(raw raw '{"method":42}\x00')" "io.sunkd.InvalidMessage closed=True" "method not a string"
is "$(setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" oversize 70000)" \
        "io.sunkd.InvalidMessage closed=True" "a request over 64 KiB from another uid than root"
is "$(raw oversize 70000)" "ok closed=False" "root's is read (up to 16 MiB: the prolog client's job environments)"
is "$(raw oversize 17000000)" "io.sunkd.InvalidMessage closed=True" "and root's over 16 MiB is not"
is "$(raw deep 1000)" "io.sunkd.InvalidMessage closed=True" "deep nesting"
is "$(raw truncated)" "io.sunkd.InvalidMessage truncated message closed=True" "a truncated message then EOF: an error, then closed"
# Nothing but the idle timer closes a silent client, and not before 1 s; how
# much later depends on the machine's load.
like "$(raw silent)" "^closed after ([1-9][0-9]*)\.[0-9]s" "a client that sends nothing is closed after the idle timeout"
is "$(raw pipelined)" "ping=True version=$("$SUNKD" --version | awk '{print $2}')" "pipelined requests answered in order"
# Beyond max_connections (256) a client is closed at once; idle clients free
# their slots after idle_timeout, so how many more get in depends on timing.
out=$(raw many 500)
read -r c a f h <<< "$(echo "$out" | sed 's/[a-z]*=//g')"
is "$c" 500 "500 clients connect at once"
ok "at least max_connections of them are answered ($out)" test "$a" -ge 256
# A client still waiting after 30 s counts as hanging, not as refused.
is "$((a + f)) $h" "500 0" "every other one is closed cleanly, none left hanging"
is "$(ctl ping)" "pong" "still serving after all of that"
like "$(raw raw '{"method":"io.sunkd.Test.Echo","parameters":{"x":[1,{"y":"z"}]}}\x00')" "ok closed=False" "module method echo"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
unlike "$(cat "$T/sunkd.log")" "AddressSanitizer|runtime error" "no sanitizer reports"
done_testing
