#!/bin/bash
# deadline: 600
# nsscache itself, as Debian 13 packages it (nsscache 0.49 with
# python3-ldap), against the same slapd and the same nsscache.conf as the
# golden maps were made with (tests/data/nsscache/ldap/reference.sh): its
# output is the golden files byte for byte, in RFC 2307, RFC 2307bis and
# Active Directory mode.  0245-nsscache-ldap.t holds sunkd's maps to the
# same files, here in the same run, so sunkd writes what Debian's nsscache
# writes (for RFC 2307 less the entries sunkd rejects by design, which
# reference.sh takes out of both).  Run by make check-slurm-24.11.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
NSSCACHE=$(command -v nsscache) || bail_out "nsscache is needed (Debian 13 package nsscache: make deps)"
for c in slapd ldapadd; do
        command -v "$c" > /dev/null || bail_out "$c is needed (Debian packages slapd, ldap-utils)"
done
diag "nsscache: $(dpkg-query -W -f='${Version}' nsscache 2>/dev/null || echo unknown)"
T=$(mktemp -d /tmp/nsscache-debian.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$T"' EXIT
GOLDEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/golden"

NSSCACHE="$NSSCACHE" OUT="$T/out" "$SUNKD_SRCDIR/tests/data/nsscache/ldap/reference.sh" > "$T/log" 2>&1
rc=$?
is "$rc" 0 "Debian's nsscache ran against slapd in each mode"
[ "$rc" = 0 ] || tail -n 20 "$T/log" | sed 's/^/# /'
for m in rfc2307 rfc2307bis ad; do
        is "$(cd "$T/out/$m" 2>/dev/null && ls | tr '\n' ' ')" "$(cd "$GOLDEN/$m" && ls | tr '\n' ' ')" \
                "$m: nsscache writes the golden set of files"
        bad=
        for f in "$GOLDEN/$m"/*; do
                cmp -s "$f" "$T/out/$m/${f##*/}" || bad="$bad ${f##*/}"
        done
        is "${bad:-none}" none "$m: each of them byte for byte"
        [ -z "$bad" ] || diff "$GOLDEN/$m/${bad# }" "$T/out/$m/${bad# }" 2>&1 | head -5 | sed 's/^/# /'
done
done_testing
