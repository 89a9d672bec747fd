#!/bin/bash
# deadline: 300
# The version is AC_INIT's in configure.ac and written nowhere else in the
# tree: the programs, the man pages, the socket and the metrics take it from
# the build.  The module ABI in the version lines is <sunkd/module.h>'s.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/source-files.sh"
sunkd_setup

S="$SUNKD_SRCDIR"
B="$SUNKD_BUILDDIR"
V=$(sed -n 's/^PACKAGE_VERSION = //p' "$B/Makefile")
[ -n "$V" ] || bail_out "no PACKAGE_VERSION in $B/Makefile"
abi_macro() {
        sed -n -E "s/^#define SUNKD_MODULE_ABI_$1 ([0-9]+)\$/\\1/p" "$S/agent/include/sunkd/module.h"
}
ABI="$(abi_macro MAJOR).$(abi_macro MINOR)"
[[ $ABI =~ ^[0-9]+\.[0-9]+$ ]] || bail_out "cannot read the ABI macros of agent/include/sunkd/module.h"
VRE=${V//./\\.}
ABIRE=${ABI//./\\.}

is "$(sed -n -E 's/^AC_INIT\(\[sunkd\], \[([^]]*)\].*/\1/p' "$S/configure.ac")" "$V" \
        "configure.ac's AC_INIT is where the build's version $V comes from"

# Written nowhere else: the files of the tree but configure.ac (and, in a
# tarball, what autoreconf generated from it) do not name it.
source_kind "$S"
source_files "$S" > "$T/files" || bail_out "cannot list the source files"
[ -s "$T/files" ] || bail_out "no source files found in $S"
GENERATED='^(configure\.ac|configure|Makefile\.in|config\.h\.in|aclocal\.m4|build-aux/.*|m4/(libtool|lt.*)\.m4)$'
hits=$(cd "$S" && grep -v -E "$GENERATED" "$T/files" | tr '\n' '\0' |
        xargs -0 grep -l -E "(^|[^0-9.])$VRE([^0-9]|\$)" | paste -s -d ' ')
is "$hits" "" "no file but configure.ac writes the version $V ($(wc -l < "$T/files") files looked at)"

is "$("$SUNKD" --version)" "sunkd $V (module ABI $ABI)" "sunkd --version: the version and the module ABI"
is "$("$SUNKCTL" --version)" "sunkctl $V (module ABI $ABI)" "sunkctl --version: the same, for the sunkd it was built with"
is "$("$B/modules/authkeys/sunkd-authkeys" --version)" "sunkd-authkeys $V" "sunkd-authkeys --version"
is "$("$B/modules/prolog/sunkd-prolog" --version)" "sunkd-prolog $V" "sunkd-prolog --version"
is "$("$B/modules/prolog/sunkd-epilog" --version)" "sunkd-epilog $V" "sunkd-epilog --version, by its other name"
for p in sunkd.8 sunkctl.1 sunkd.yaml.5 sunkd-authkeys.8 sunkd-prolog.8; do
        [ -f "$B/man/$p" ] || bail_out "man/$p is not built in $B"
        like "$(sed -n '/^\.TH /p' "$B/man/$p")" "\"sunkd $VRE\"" "man/$p names sunkd $V in its title line"
done

sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s"
sunkd_start
is "$(ctl version)" "sunkctl $V (module ABI $ABI)
sunkd $V (module ABI $ABI)" "sunkctl version: the client's line, then the daemon's"
like "$(ctl metrics)" "^sunkd_build_info\{version=\"$VRE\",abi=\"$ABIRE\"\} 1\$" "sunkd_build_info"
is "$(ctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["version"], *[m["name"] + "=" + m["version"] for m in s["modules"]])')" "$V testmod=$V" \
        "the socket's status: the daemon's version, and the modules built with it"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"

done_testing
