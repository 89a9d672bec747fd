#!/bin/bash
# The golden cache files are what derive.py makes from the data set, using
# nsscache's own expressions: run it and compare, so the two cannot drift
# apart (test-nsscache-cache holds sunkd's writer to the golden files).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
GOLDEN="$SUNKD_SRCDIR/tests/data/nsscache/golden"
D=$(mktemp -d /tmp/sunkd-golden.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$D"' EXIT

cp "$GOLDEN/derive.py" "$D/" || bail_out "no derive.py in $GOLDEN"
out=$(cd "$D" && python3 ./derive.py 2>&1); rc=$?
is "$rc" 0 "derive.py runs"
[ -z "$out" ] || diag "$out"

files=$(cd "$GOLDEN" && ls | grep -E '\.cache(\.ix[a-z]+)?$')
is "$(cd "$D" && ls | grep -E '\.cache(\.ix[a-z]+)?$')" "$files" "it writes exactly the golden files"
for f in $files; do
        ok "$f: the derivation and the golden file are byte-identical" cmp "$D/$f" "$GOLDEN/$f"
done
ok "the golden set has all four maps and their indexes" test "$(echo "$files" | wc -l)" -eq 10
for m in "passwd.cache ixname:0 ixuid:2" "group.cache ixname:0 ixgid:2" "shadow.cache ixname:0" "sshkey.cache ixname:0"; do
        out=$(python3 "$SUNKD_SRCDIR/tests/lib/nss-index-check.py" "$GOLDEN/"$m 2>&1); rc=$?
        is "$rc $out" "0 " "${m%% *}: every index record points at its own line, in bytes"
done
done_testing
