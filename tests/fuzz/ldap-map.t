#!/bin/sh
# The ldap source's mapping fuzz corpus (source = ldap).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-ldap-map ldap-map
