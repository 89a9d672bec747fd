#!/bin/bash
# The comment at the top of each C file of the daemon and the modules is a
# reader's way in: what the file holds and what must stay true of it, in at
# most 40 lines.  Details belong beside the code they explain.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

MAX=40

# header_lines FILE: the lines of the comment that opens FILE, 0 for none.
header_lines() {
        awk 'NR == 1 && !/^\/\*/ { print 0; exit } /\*\// { print NR; exit }' "$1"
}

cd "$SUNKD_SRCDIR" || bail_out "no source tree at $SUNKD_SRCDIR"
files=$(find agent modules -name '*.[ch]' | sort)
[ -n "$files" ] || bail_out "no C files under agent/ and modules/"
long=
for f in $files; do
        n=$(header_lines "$f")
        n=${n:-0}
        [ "$n" -le "$MAX" ] || long="$long $f ($n lines)"
done
is "$long" "" "every file header under agent/ and modules/ has at most $MAX lines"

done_testing
