#!/bin/bash
# deadline: 600
# The exposure systemd-analyze security --offline=yes gives the unit, alone
# and with the prolog module's drop-in, is no worse than README.md records
# (its "Hardening" table), and the unit alone is at or below 3.5 (chrony's
# 4.0 on Debian 12 is the nearest packaged daemon).  A change that loosens
# the sandbox fails here until the README says so.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
command -v systemd-analyze >/dev/null || bail_out "systemd-analyze not found: install the Debian package systemd (make deps)"
U="$SUNKD_BUILDDIR/systemd"
[ -f "$U/sunkd.service" ] && [ -f "$U/prolog.conf" ] || bail_out "systemd/ units not built in $SUNKD_BUILDDIR"
T=$(mktemp -d /tmp/sunkd-test.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$T"' EXIT

# recorded ROW: the score in README.md's row that starts with ROW.
recorded() {
        grep -F -- "$1" "$SUNKD_SRCDIR/README.md" | head -n 1 | awk -F'|' '{ print $3 }' | grep -o -E '[0-9]+\.[0-9]'
}
# score DIR: the overall exposure of DIR/sunkd.service (drop-ins beside it).
score() {
        SYSTEMD_LOG_COLOR=0 systemd-analyze security --offline=yes --no-pager "$1/sunkd.service" 2>&1 |
                sed -n -E 's/.*Overall exposure level for sunkd\.service: ([0-9]+\.[0-9]).*/\1/p'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

mkdir -p "$T/base" "$T/prolog/sunkd.service.d"
cp "$U/sunkd.service" "$T/base/" && cp "$U/sunkd.service" "$T/prolog/" && cp "$U/prolog.conf" "$T/prolog/sunkd.service.d/"

base=$(score "$T/base") prolog=$(score "$T/prolog")
rec_base=$(recorded '| `sunkd.service` alone') rec_prolog=$(recorded '| `sunkd.service` with the prolog drop-in')
[ -n "$base" ] && [ -n "$prolog" ] || bail_out "systemd-analyze security gave no score"
[ -n "$rec_base" ] && [ -n "$rec_prolog" ] || bail_out "README.md has no Hardening table with both rows"
diag "sunkd.service: $base (README: $rec_base); with the prolog drop-in: $prolog (README: $rec_prolog)"
ok "the unit alone scores $base, no worse than the $rec_base README records" le "$base" "$rec_base"
ok "and at most 3.5" le "$base" 3.5
ok "with the prolog drop-in it scores $prolog, no worse than the $rec_prolog README records" le "$prolog" "$rec_prolog"
ok "the drop-in is read: it loosens the sandbox" test "$prolog" != "$base"

done_testing
