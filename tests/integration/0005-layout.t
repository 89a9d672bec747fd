#!/bin/bash
# The source tree keeps its layers apart: agent/util/ is loop-free helpers
# that include nothing of the daemon; agent/client/ includes util/ and the
# Varlink codec only; a module includes <sunkd/module.h>, util/ and its own
# folder (a client program in it also client/client.h), and so do the files
# of its subfolders.  agent/*.h is the daemon's own, included by the daemon
# alone.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

S="$SUNKD_SRCDIR"
[ -d "$S/agent/util" ] && [ -d "$S/agent/client" ] && [ -d "$S/modules" ] || bail_out "source tree not found at $S"

# quoted FILE: the "..." includes of FILE, one per line.
quoted() {
        sed -n -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$1"
}

# check DIR ALLOWED...: every quoted include of DIR's sources is a file of DIR
# itself, or (with ROOT set: a module's subfolder) a file of the module's own
# folder ROOT named from there, or matches one of the extended regexes
# ALLOWED.  No include climbs out with "..".
check() {
        local dir="$1" f inc bad="" n=0 re ok_inc
        shift
        for f in "$S/$dir"/*.[ch]; do
                [ -e "$f" ] || continue
                n=$((n + 1))
                while read -r inc; do
                        [ -n "$inc" ] || continue
                        ok_inc=0
                        [ -f "$S/$dir/$inc" ] && ok_inc=1
                        [ -n "${ROOT:-}" ] && [ -f "$S/$ROOT/$inc" ] && ok_inc=1
                        case "/$inc/" in */../*) ok_inc=0 ;; esac
                        for re in "$@"; do
                                printf '%s\n' "$inc" | grep -q -x -E "$re" && ok_inc=1
                        done
                        [ "$ok_inc" = 1 ] || bad="$bad ${f#$S/}:\"$inc\""
                done < <(quoted "$f")
        done
        [ "$n" -gt 0 ] || bail_out "no sources in $dir"
        is "${bad# }" "" "$dir includes only its own and the allowed headers"
}

util_h() { (cd "$S/agent/util" && ls *.h) | sed 's/\./\\./; s|^|util/|' | paste -s -d'|'; }
UTIL="($(util_h))"

check agent/util "$UTIL"
check agent/client "$UTIL" "client/[a-z-]+\.h" "varlink\.h" "[a-z]+/[a-z]+-render\.h"
for d in "$S"/modules/*/; do
        d=${d%/}
        check "modules/${d##*/}" "$UTIL" "sunkd/module\.h" "client/client\.h"
        # its subfolders, as its own files: they name the module's headers
        # from the module's folder, and nothing else of the tree
        for sub in "$d"/*/; do
                [ -d "$sub" ] || continue
                sub=${sub%/}
                ROOT="modules/${d##*/}" check "modules/${d##*/}/${sub##*/}" "$UTIL" "sunkd/module\.h"
        done
done
check tests/modules "$UTIL" "sunkd/module\.h"

done_testing
