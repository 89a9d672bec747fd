#!/bin/bash
# The source tree keeps its layers apart: agent/util/ is loop-free helpers
# that include nothing of the daemon; agent/modutil/, the helpers only
# modules use, includes util/ alone; agent/proto/, the Varlink codec the
# daemon and the clients share, util/ alone; agent/client/ includes util/
# and the codec only; the daemon (agent/*.[ch]) util/, the codec and
# <sunkd/module.h>, never modutil/ nor client/; a module includes
# <sunkd/module.h>, util/, modutil/ and its own folder (a client program in
# it also client/client.h, its render file client/sunkctl-view.h).
# The files of a module's subfolders follow its rule.  agent/*.h is the
# daemon's own, included by the daemon alone.  Nothing under agent/ names a
# module: the code (comments aside) and the makefiles' rules know modules
# only through the lists the modules' own local.mk fill.
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
modutil_h() { (cd "$S/agent/modutil" && ls *.h) | sed 's/\./\\./; s|^|modutil/|' | paste -s -d'|'; }
UTIL="($(util_h))"
MODUTIL="($(modutil_h))"

check agent/util "$UTIL"
check agent/modutil "$UTIL" "$MODUTIL"
check agent/proto "$UTIL" "proto/varlink\.h"
check agent "$UTIL" "proto/varlink\.h" "sunkd/module\.h"
check agent/client "$UTIL" "client/[a-z-]+\.h" "proto/varlink\.h"
for d in "$S"/modules/*/; do
        d=${d%/}
        check "modules/${d##*/}" "$UTIL" "$MODUTIL" "sunkd/module\.h" "client/client\.h" "client/sunkctl-view\.h"
        # its subfolders, as its own files: they name the module's headers
        # from the module's folder, and nothing else of the tree
        for sub in "$d"/*/; do
                [ -d "$sub" ] || continue
                sub=${sub%/}
                ROOT="modules/${d##*/}" check "modules/${d##*/}/${sub##*/}" "$UTIL" "$MODUTIL" "sunkd/module\.h"
        done
done
check tests/modules "$UTIL" "sunkd/module\.h"

# The daemon links no helper only modules use, and a module no piece of
# the daemon: libsunkd-core's and sunkd's libraries, as the makefile names them.
mk_var() { sed -n "/^%canon_reldir%_$1 = /,/[^\\]\$/p" "$S/agent/local.mk"; }
core_libs="$(mk_var libsunkd_core_la_LIBADD) $(mk_var sunkd_LDADD)"
[ -n "$(mk_var libsunkd_core_la_LIBADD)" ] || bail_out "no libsunkd_core_la_LIBADD in agent/local.mk"
unlike "$core_libs" "modutil" "the daemon does not link libsunkd-modutil"
bad=$(grep -l -E 'agent/libsunkd-core\.la' "$S"/modules/*/local.mk | sed "s|^$S/||" | paste -s -d' ')
is "$bad" "" "no module links the daemon's core"
# util/ holds no helper that only modules include, but for the general
# text helpers named here (a string builder, the cleaning of outside text),
# which are not shaped by any module's files.
GENERAL="util/strbuf.h util/text-clean.h"
only_mod=""
for h in "$S"/agent/util/*.h; do
        inc="util/${h##*/}"
        case " $GENERAL " in *" $inc "*) continue ;; esac
        users=$(grep -rl --include='*.[ch]' -F "\"$inc\"" "$S/agent" "$S/modules" | grep -v "^$S/agent/util/")
        [ -z "$users" ] && continue
        printf '%s\n' "$users" | grep -q -v "^$S/modules/" || only_mod="$only_mod $inc"
done
is "${only_mod# }" "" "every helper of agent/util/ is used outside the modules (the others are in modutil/)"

# code FILE: FILE without its comments (C: by the preprocessor, macros left
# as written; a makefile: its '#' lines).
command -v gcc >/dev/null || bail_out "gcc is needed to read the sources without their comments"
code() {
        case "$1" in
        *.mk) grep -v -E '^[[:space:]]*#' "$1" ;;
        *) gcc -fpreprocessed -E -P -x c "$1" 2>/dev/null || echo "UNREADABLE $1" ;;
        esac
}
modules=$(cd "$S/modules" && for d in */; do printf '%s\n' "${d%/}"; done | paste -s -d'|')
[ -n "$modules" ] || bail_out "no modules found"
named=""
while read -r f; do
        hits=$(code "$f" | grep -n -i -E "\b($modules)\b|modules/|UNREADABLE" | head -3 | tr '\n' ' ')
        [ -z "$hits" ] || named="$named ${f#$S/}: $hits"
done < <(find "$S/agent" -name '*.[ch]' -o -name '*.mk' | sort)
is "${named# }" "" "nothing under agent/ names a module ($modules) outside a comment"

# The index of the tests' helpers lists each of them, and names none that is gone.
idx="$S/tests/lib/README.md"
[ -f "$idx" ] || bail_out "no tests/lib/README.md"
missing=""
for f in "$S"/tests/lib/*; do
        n=${f##*/}
        [ "$n" = README.md ] && continue
        grep -q -F "\`$n\`" "$idx" || missing="$missing $n"
done
is "${missing# }" "" "tests/lib/README.md lists every helper of tests/lib"
gone=""
for n in $(grep -o -E '`[a-z][a-z0-9.-]*\.(sh|py|c|h)`|`(with-deadline|summary)`' "$idx" | tr -d '`' | sort -u); do
        [ -e "$S/tests/lib/$n" ] || gone="$gone $n"
done
is "${gone# }" "" "tests/lib/README.md names only helpers that are there"

# Each module's README says which tests hold it: a "## Tests" section naming
# every integration test named for the module, and only tests that exist.
for d in "$S"/modules/*/; do
        d=${d%/}
        m=${d##*/}
        readme="$d/README.md"
        tests=$(sed -n '/^## Tests$/,/^## /p' "$readme" 2>/dev/null)
        ok "modules/$m/README.md has a Tests section" [ -n "$tests" ]
        unnamed=""
        for t in "$S"/tests/integration/[0-9]*-"$m"*.t; do
                [ -e "$t" ] || continue
                grep -q -F "${t##*/}" <<< "$tests" || unnamed="$unnamed ${t##*/}"
        done
        is "${unnamed# }" "" "modules/$m/README.md's Tests names each of its integration tests"
        gone=""
        for t in $(grep -o -E '[0-9]{4}-[a-z0-9-]+\.t|\b(test|fuzz|bench)-[a-z0-9-]+' <<< "$tests" | sort -u); do
                case "$t" in
                *.t) [ -e "$S/tests/integration/$t" ] ;;
                test-*) [ -e "$S/tests/unit/$t.c" ] ;;
                fuzz-*) [ -e "$S/tests/fuzz/$t.c" ] ;;
                bench-*) [ -e "$S/tests/bench/$t.c" ] ;;
                esac || gone="$gone $t"
        done
        is "${gone# }" "" "modules/$m/README.md's Tests names only tests that exist"
done

# agent/README.md draws every module.
drawing=$(sed -n '/^```$/,/^```$/p' "$S/agent/README.md" | head -40)
for d in "$S"/modules/*/; do
        d=${d%/}
        like "$drawing" "${d##*/}\.so" "agent/README.md draws the ${d##*/} module"
done

done_testing
