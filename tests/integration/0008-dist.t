#!/bin/bash
# deadline: 300
# The release tarball holds every file of the source tree: what make distdir
# copies is compared with git's list of tracked files (in an unpacked
# tarball, with the files there), so a file the build, the tests or the demo
# need cannot be left out of EXTRA_DIST unnoticed.  make distcheck then
# proves the tarball builds and passes make check.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/source-files.sh"

S=$(cd "$SUNKD_SRCDIR" && pwd -P) || bail_out "no source tree at $SUNKD_SRCDIR"
B="$SUNKD_BUILDDIR"
T=$(mktemp -d /tmp/sunkd-test.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$T"' EXIT

# Tracked files that stay out of the tarball, each for a reason:
#   .gitignore  git's own
#   .ci/*       the repository's CI entry: make deps as root, then make check
#   m4/.keep    keeps m4/ in git; the tarball's m4/ holds aclocal's macros
EXCLUDED='^(\.gitignore|\.ci/.*|m4/\.keep)$'

source_kind "$S"
if [ "$SOURCE_KIND" = git ]; then
        diag "source files: git ls-files"
else
        diag "source files: the unpacked tarball's (no .git in $S)"
fi
source_files "$S" > "$T/source" || bail_out "cannot list the source files"
[ -s "$T/source" ] || bail_out "no source files found in $S"

make -s -C "$B" distdir distdir="$T/dist" > "$T/distdir.log" 2>&1 \
        || { sed 's/^/# /' "$T/distdir.log"; bail_out "make distdir failed"; }
(cd "$T/dist" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) > "$T/dist.list"

missing=$(LC_ALL=C comm -23 "$T/source" "$T/dist.list" | grep -v -E "$EXCLUDED" | paste -s -d ' ')
is "$missing" "" "every file of the source tree is in the tarball, or excluded with its reason"

# Each exclusion names a file that is there (in a clone), so the list says
# what it leaves out and nothing more.
if [ "$SOURCE_KIND" = git ]; then
        for f in .gitignore .ci/run m4/.keep; do
                ok "excluded $f is a tracked file" grep -q -x -F "$f" "$T/source"
                ok "and $f is not in the tarball" test ! -e "$T/dist/$f"
        done
fi

ok "the tarball's top-level Makefile is the committed driver, not build/'s" cmp -s "$S/Makefile" "$T/dist/Makefile"
for f in configure Makefile.in build-aux/tap-driver.sh build-aux/ltmain.sh; do
        ok "the tarball has the generated $f (no autoreconf needed)" test -f "$T/dist/$f"
done
# Makefile.am or a local.mk edited after configure was last generated is a
# tree's usual state (automake regenerates Makefile.in, not configure); the
# driver in the tarball still has nothing to regenerate.
touch "$T/dist/Makefile.am" "$T/dist/tests/local.mk"
out=$(make -n -C "$T/dist" -f Makefile configure 2>&1); rc=$?
is "$rc" 0 "make -n configure reads the driver in the tarball"
unlike "$out" "autoreconf" "the driver in the tarball does not run autoreconf"

done_testing
