#!/bin/bash
# deadline: 300
# A module's linger (module ABI 1.5): a stop lets the work it says is in
# flight end first, and goes on by itself once the time it asked for is up,
# even when the module never says it is done.  At a reload that removes the
# module, its methods answer Unavailable meanwhile; at shutdown sunkd exits
# cleanly after it.  (0290 shows the prolog module ending its linger itself.)
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"

sunkd_config "modules:
  testmod:
    interval: 1h
    linger: 2s"
sunkd_start

# ---- a reload that removes the module ----
sunkd_config "modules: {}"
log_mark
kill -HUP "$SUNKD_PID"
ok "the stop lets the module's work end first" wait_log "testmod.*letting its work in flight end first, for up to 2.0s"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Echo '{}')" "io.sunkd.Unavailable" "its methods take no new call meanwhile"
ok "its time up, the stop goes on by itself" wait_log "testmod.*its time for work in flight is up|testmod.*work in flight has ended"
ok "and the module is gone" wait_until 300 eval '! ctl status | grep -q testmod'

# ---- shutdown ----
sunkd_config "modules:
  testmod:
    interval: 1h
    linger: 1s"
sunkd_hup
ok "the module is back" wait_until 300 eval 'ctl status | grep -q testmod'
log_mark
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly after the linger"
like "$(log_since)" "letting its work in flight end first" "having waited for it"
unlike "$(log_since)" "Shutdown deadline reached" "within the shutdown deadline, which the linger extends"
done_testing
