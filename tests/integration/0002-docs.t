#!/bin/bash
# The man pages: they render without warnings, and they document what the
# programs and the code actually accept: every option and command that
# `sunkd --help` and `sunkctl --help` print, every top-level and module key
# of agent/conf.c, every key of the modules' tables, every metric family,
# socket method and error registered in agent/ and modules/, and every
# command of sunkctl's table in agent/client/.  Both ways: a key, metric,
# method, error or sunkctl command the pages name exists in the code, and
# every sunkd, sunkctl and sunkd-authkeys command line they show is one the
# programs take (tests/lib/docs.sh).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
. "$SUNKD_SRCDIR/tests/lib/docs.sh"

command -v groff >/dev/null || bail_out "groff not found: install the Debian package groff-base (make deps)"
command -v man >/dev/null || bail_out "man not found: install the Debian package man-db (make deps)"

MAN="$SUNKD_BUILDDIR/man"
PAGES="sunkd.8 sunkctl.1 sunkd.yaml.5 sunkd-authkeys.8 sunkd-prolog.8"
for p in $PAGES; do
        [ -f "$MAN/$p" ] || bail_out "man/$p not built in $SUNKD_BUILDDIR"
done

for p in $PAGES; do
        err=$(groff -man -ww -z "$MAN/$p" 2>&1)
        is "$err" "" "$p: groff -man -ww reports nothing"
        err=$(LC_ALL=C.UTF-8 MAN_DISABLE_SECCOMP=1 man --warnings -E UTF-8 -l "$MAN/$p" 2>&1 >/dev/null)
        is "$err" "" "$p: man --warnings reports nothing"
        unlike "$(cat "$MAN/$p")" "@[a-zA-Z_]+@" "$p: every path placeholder is filled in"
done

# Plain text, one paragraph per line and no hyphenation, so that names stay
# whole; a tag of a .TP list starts in column 8.
render() {
        groff -man -Tascii -rLL=300n -rHY=0 -P-cbou "$MAN/$1" 2>/dev/null
}
SUNKD8=$(render sunkd.8)
SUNKCTL1=$(render sunkctl.1)
YAML5=$(render sunkd.yaml.5)
AUTHKEYS8=$(render sunkd-authkeys.8)
PROLOG8=$(render sunkd-prolog.8)

# has_tag TEXT NAME: NAME (an extended regex) begins a tag line.
has_tag() {
        printf '%s\n' "$1" | grep -q -E "^ {7}$2([ ,=(]|\$)"
}
# section TEXT NAME: the lines of one section.
section() {
        printf '%s\n' "$1" | sed -n "/^$2\$/,/^[A-Z][A-Z -]*\$/p"
}

# sunkd: every option of --help is a tag in OPTIONS.
opts=$("$SUNKD" --help | sed -n -E 's/^ +(-[a-zA-Z], )?(--[a-z][a-z-]*).*/\1\2/p')
[ -n "$opts" ] || bail_out "no options found in sunkd --help"
for o in $(printf '%s\n' "$opts" | tr ' ' '~'); do
        o=${o//\~/ }
        ok "sunkd.8 documents option '$o'" has_tag "$(section "$SUNKD8" OPTIONS)" "$o"
done
for s in SIGHUP SIGTERM SIGINT; do
        ok "sunkd.8 documents $s" has_tag "$(section "$SUNKD8" SIGNALS)" "($s|SIGTERM, $s)"
done
for c in 0 1 2 3; do
        ok "sunkd.8 documents exit status $c" has_tag "$(section "$SUNKD8" 'EXIT STATUS')" "$c"
        ok "sunkctl.1 documents exit status $c" has_tag "$(section "$SUNKCTL1" 'EXIT STATUS')" "$c"
done
for e in NOTIFY_SOCKET WATCHDOG_USEC LISTEN_FDS JOURNAL_STREAM NSSCACHE_SCIM_AUTH_TOKEN; do
        like "$(section "$SUNKD8" ENVIRONMENT)" "^ {7}([A-Z_]+, )?$e" "sunkd.8 documents \$$e"
done
like "$(section "$SUNKD8" READINESS)" "--notify-fd" "sunkd.8 explains readiness with --notify-fd"

# sunkctl: every command and option of --help.
help=$("$SUNKCTL" --help)
verbs=$(printf '%s\n' "$help" | sed -n '/^Commands:/,/^$/p' | sed -n -E 's/^  ([a-z]+) .*/\1/p')
[ -n "$verbs" ] || bail_out "no commands found in sunkctl --help"
for v in $verbs; do
        ok "sunkctl.1 documents command '$v'" has_tag "$(section "$SUNKCTL1" COMMANDS)" "$v"
done
opts=$(printf '%s\n' "$help" | sed -n '/^Options:/,/^$/p' | sed -n -E 's/^ +(-[a-zA-Z], )?(--[a-z][a-z-]*).*/\1\2/p')
[ -n "$opts" ] || bail_out "no options found in sunkctl --help"
for o in $(printf '%s\n' "$opts" | tr ' ' '~'); do
        o=${o//\~/ }
        ok "sunkctl.1 documents option '$o'" has_tag "$(section "$SUNKCTL1" OPTIONS)" "$o"
done
like "$(section "$SUNKCTL1" ENVIRONMENT)" "^ {7}SUNKD_SOCKET" "sunkctl.1 documents \$SUNKD_SOCKET"

# sunkd.yaml: the keys of the code's tables.  table FILE NAME: the quoted
# first fields of the rows of the C array NAME.
table() {
        c_rows "$1" "$2" | sed -n -E 's/^ *(\{ |[A-Z]+\()"([A-Za-z_]+)".*/\2/p'
}
top=$(table agent/conf.c top_keys)
mod=$(table agent/conf.c module_keys)
[ -n "$top" ] && [ -n "$mod" ] || bail_out "no key tables found in agent/conf.c"
for k in $top; do
        ok "sunkd.yaml.5 documents top-level key '$k'" has_tag "$(section "$YAML5" 'TOP-LEVEL KEYS')" "$k"
done
for k in $mod; do
        ok "sunkd.yaml.5 documents module key '$k'" has_tag "$(section "$YAML5" 'MODULE SECTIONS')" "$k"
done

# The nsscache module's one key table: K/KI rows and the token's are "ini", "yaml" (NULL where a
# file does not take the key), KF rows one name for both files, KM/KS rows one per-map name.
rows=$(c_rows modules/nsscache keys)
ini=$(printf '%s\n' "$rows" | sed -n -E 's/^ *(\{ |K[A-Z]*\()"([a-z0-9_]+)".*/\2/p')
yaml=$(printf '%s\n' "$rows" | sed -n -E -e 's/^ *(\{ |KI?\()(NULL|"[a-z0-9_]+"), "([a-z0-9_]+)".*/\3/p' \
        -e 's/^ *KF\("([a-z0-9_]+)".*/\1/p')
maps=$(printf '%s\n' "$rows" | sed -n -E 's/^ *K[MS]\("([a-z0-9_]+)".*/\1/p')
# The per-map sub-sections (passwd:, DEFAULT: ...).
subs=$(c_rows modules/nsscache yaml_map_sections | grep -o -E '"[A-Za-z]+"' | tr -d '"')
yaml="$yaml $subs"
[ -n "$yaml" ] && [ -n "$maps" ] && [ -n "$ini" ] || bail_out "no key table keys[] found in modules/nsscache"
nss=$(section "$YAML5" 'THE NSSCACHE MODULE')
[ -n "$subs" ] || bail_out "no per-map sub-sections (yaml_map_sections[]) found in modules/nsscache"
for k in $yaml $maps; do
        if printf '%s\n' $subs | grep -q -x "$k"; then
                like "$nss" "(^|[^A-Za-z_])$k:" "sunkd.yaml.5 documents the nsscache sub-section '$k:'"
        else
                ok "sunkd.yaml.5 documents nsscache key '$k'" has_tag "$nss" "([a-z0-9_]+, )*$k"
        fi
done
conf=$(section "$YAML5" 'THE NSSCACHE.CONF FILE')
for k in $ini; do
        if printf '%s\n' $yaml $maps | grep -q -x "$k"; then
                continue
        fi
        like "$conf" "(^|[^a-z_])${k}([^a-z_]|\$)" "sunkd.yaml.5 documents nsscache.conf key '$k'"
done
like "$YAML5" "force-next-run" "sunkd.yaml.5 explains force-next-run"

ak=$(table modules/authkeys/authkeys.c conf_keys)
[ -n "$ak" ] || bail_out "no key table found in modules/authkeys/authkeys.c"
for k in $ak; do
        ok "sunkd.yaml.5 documents authkeys key '$k'" has_tag "$(section "$YAML5" 'THE AUTHKEYS MODULE')" "$k:"
done

gr=$(table modules/gres/gres-settings.c conf_keys)
[ -n "$gr" ] || bail_out "no key table found in modules/gres/gres-settings.c"
for k in $gr; do
        ok "sunkd.yaml.5 documents gres key '$k'" has_tag "$(section "$YAML5" 'THE GRES MODULE')" "$k:"
done

# The health module's slurmrestd map: each key is named in its entry.
rk=$(table modules/health/health-settings.c rest_keys)
[ -n "$rk" ] || bail_out "no key table rest_keys found in modules/health/health-settings.c"
rest=$(section "$YAML5" 'THE HEALTH MODULE' | sed -n '/^ \{7\}slurmrestd: mapping/,/^ \{7\}[a-z_]*: /p')
for k in $rk; do
        like "$rest" "(^|[^a-z_])$k([^a-z_]|\$)" "sunkd.yaml.5 documents health slurmrestd key '$k'"
done

# The health module: each top-level key is a tag of its section ("key:"),
# each check type of the code's table (modules/health, script and gpu
# included) a tag of its `checks:` list; and each tag there is one of them.
hk=$(table modules/health/health-settings.c conf_keys)
[ -n "$hk" ] || bail_out "no key table conf_keys found in modules/health/health-settings.c"
types=$(c_flat modules/health | grep -oE 'const HealthCheckType health_check_[a-z_]+ = \{ \.name = "[a-z_]+"' |
        cut -d'"' -f2 | sort -u)
[ -n "$types" ] || bail_out "no check types found in modules/health"
for t in script gpu mount; do
        grep -qx "$t" <<< "$types" || bail_out "check type '$t' not found in modules/health's table"
done
health=$(section "$YAML5" 'THE HEALTH MODULE')
for k in $hk; do
        ok "sunkd.yaml.5 documents health key '$k'" has_tag "$health" "$k:"
done
for t in $types; do
        like "$health" "^ {14}([a-z_]+, )*$t([ ,]|\$)" "sunkd.yaml.5 documents health check type '$t'"
done

# The health module's codes (modules/health/checks/health-code.c), both ways:
# each is a tag of sunkd.yaml.5's "Codes and remedies", a failing one with
# its remedy in parentheses, and each tag there is one of them; and every code
# a check fails with in the code is in that table.
code_rows=$(c_rows modules/health/checks/health-code.c health_codes |
        sed -n -E 's/^ *\{ "([*a-z_-]+)", (true|false), HEALTH_REMEDY_([A-Z_]+),.*/\1 \2 \3/p')
[ "$(wc -l <<< "$code_rows")" -gt 30 ] || bail_out "no table health_codes found in modules/health/checks/health-code.c"
codes=$(printf '%s\n' "$health" | sed -n '/^   Codes and remedies$/,/^   [A-Z]/p')
[ -n "$codes" ] || bail_out "sunkd.yaml.5 has no 'Codes and remedies' in its health section"
while read -r c failing remedy; do
        c=${c/#\*/type}
        remedy=$(tr 'A-Z_' 'a-z-' <<< "$remedy")
        if [ "$failing" = true ]; then
                like "$codes" "^ {14}$c \\($remedy\\)\$" "sunkd.yaml.5 documents health code '$c' ($remedy)"
        else
                like "$codes" "^ {14}$c \\((pass|unknown)\\)\$" "sunkd.yaml.5 documents health code '$c'"
        fi
done <<< "$code_rows"
known=$(cut -d' ' -f1 <<< "$code_rows" | sed 's/^\*/type/')
for t in $(printf '%s\n' "$codes" | sed -n -E 's/^ {14}([a-z_][a-z_-]*)( .*)?$/\1/p'); do
        ok "sunkd.yaml.5's health code '$t' is in the table" grep -qx -- "$t" <<< "$known"
done
used=$(c_flat modules/health |
        grep -oE '(health_result_set|result)\( ?[a-z&>.-]+, HEALTH_FAIL, [^,;]*"[a-z_-]+"|found\(f, "[a-z-]+"|port_fail\(s, "[a-z-]+"' |
        grep -oE '"[a-z_-]+-[a-z_-]+"' | tr -d '"' | sort -u)
[ "$(wc -l <<< "$used")" -gt 20 ] || bail_out "no failing codes found in modules/health"
for c in $used; do
        ok "health code '$c' a check fails with is in health_codes" grep -qx -- "$c" <<< "$known"
done

# The prolog module's keys, as tags of its section.
pk=$(table modules/prolog/prolog-conf.c conf_keys)
[ -n "$pk" ] || bail_out "no key table conf_keys found in modules/prolog/prolog-conf.c"
for k in $pk; do
        ok "sunkd.yaml.5 documents prolog key '$k'" has_tag "$(section "$YAML5" 'THE PROLOG MODULE')" "$k"
done

# sunkd-authkeys: every option of --help, its exit codes and environment.
AKBIN="$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys"
opts=$("$AKBIN" --help | sed -n -E 's/^ +(-[a-zA-Z], )?(--[a-z][a-z-]*).*/\1\2/p')
[ -n "$opts" ] || bail_out "no options found in sunkd-authkeys --help"
for o in $(printf '%s\n' "$opts" | tr ' ' '~'); do
        o=${o//\~/ }
        ok "sunkd-authkeys.8 documents option '$o'" has_tag "$(section "$AUTHKEYS8" OPTIONS)" "$o"
done
for c in 0 1 2; do
        ok "sunkd-authkeys.8 documents exit status $c" has_tag "$(section "$AUTHKEYS8" 'EXIT STATUS')" "$c"
done
like "$(section "$AUTHKEYS8" ENVIRONMENT)" "^ {7}SUNKD_SOCKET" "sunkd-authkeys.8 documents \$SUNKD_SOCKET"

# sunkd-prolog: every option of --help and its exit codes.
PLBIN="$SUNKD_BUILDDIR/modules/prolog/sunkd-prolog"
opts=$("$PLBIN" --help | sed -n -E 's/^ +(-[a-zA-Z], )?(--[a-z][a-z-]*).*/\1\2/p')
[ -n "$opts" ] || bail_out "no options found in sunkd-prolog --help"
for o in $(printf '%s\n' "$opts" | tr ' ' '~'); do
        o=${o//\~/ }
        ok "sunkd-prolog.8 documents option '$o'" has_tag "$(section "$PROLOG8" OPTIONS)" "$o"
done
for c in 0 1 2; do
        ok "sunkd-prolog.8 documents exit status $c" has_tag "$(section "$PROLOG8" 'EXIT STATUS')" "$c"
done


# Metrics, both ways: every family the daemon or a module registers is in
# sunkd.8's METRICS section, and every family named there is registered.
code_metrics=$(printf '%s\n' "$FLAT_AGENT" "$FLAT_MODULES" |
        grep -oE '"[a-z0-9_]+", "([^"\\]|\\.)*", SUNKD_METRIC_(COUNTER|GAUGE)' | cut -d'"' -f2 | sort -u)
[ -n "$code_metrics" ] || bail_out "no metric families found in agent/ and modules/"
man_metrics=$(section "$SUNKD8" METRICS | grep -oE 'sunkd_[a-z0-9_]*[a-z0-9]' | sed 's/^sunkd_//' | sort -u)
for f in $code_metrics; do
        ok "sunkd.8 documents metric sunkd_$f" grep -qx -- "$f" <<< "$man_metrics"
done
for f in $man_metrics; do
        case "$f" in job) continue ;; esac # "sunkd_job_*", the family of job metrics
        ok "sunkd.8's metric sunkd_$f is registered by the code" grep -qx -- "$f" <<< "$code_metrics"
done

# Socket methods and errors, both ways: every method agent/ and modules/
# register and every error they answer is a tag of sunkd.8's CONTROL SOCKET;
# every method or error a page names is one the code has.
methods=$(code_methods)
errors=$(code_errors)
[ -n "$methods" ] && [ -n "$errors" ] || bail_out "no socket methods or errors found in agent/ and modules/"
sock=$(section "$SUNKD8" 'CONTROL SOCKET')
for m in $methods; do
        ok "sunkd.8 documents method $m" has_tag "$sock" "${m//./\\.}"
done
for e in $errors; do
        ok "sunkd.8 documents error $e" has_tag "$sock" "${e//./\\.}"
done
named=$(cat "$SUNKD_SRCDIR"/man/*.in | grep -oE '(io\.sunkd|org\.varlink\.service)(\.[A-Z][A-Za-z]*)+' | sort -u)
[ -n "$named" ] || bail_out "no socket method or error named in man/"
for n in $named; do
        case "$n" in
        io.sunkd.*.*) ok "the man pages' method $n is registered by the code" grep -qx -- "$n" <<< "$methods" ;;
        *) ok "the man pages' error $n is answered by the code" grep -qx -- "$n" <<< "$errors" ;;
        esac
done

# sunkctl's commands, both ways: each of its table (agent/client/sunkctl.c)
# and each module it calls without a verb (its view's default_verb) is a tag of
# sunkctl.1's COMMANDS, and each tag there is one of them (or MODULE VERB).
ctl_cmds=$( (code_verbs; code_default_verbs) | cut -d' ' -f1)
[ -n "$ctl_cmds" ] || bail_out "no sunkctl commands found in agent/client/"
cmds=$(section "$SUNKCTL1" COMMANDS)
for v in $ctl_cmds; do
        ok "sunkctl.1 documents agent/client's command '$v'" has_tag "$cmds" "$v"
done
tags=$(printf '%s\n' "$cmds" | sed -n -E 's/^ {7}([^ ]+).*/\1/p')
[ -n "$tags" ] || bail_out "no tags in sunkctl.1's COMMANDS"
for t in $tags; do
        [ "$t" = MODULE ] && continue # MODULE VERB: any module's method, checked below
        ok "sunkctl.1's command '$t' is one sunkctl has" grep -qx -- "$t" <<< "$ctl_cmds"
done

# Every command line a page shows (a bold "sunkctl gres list", an example):
# the options, commands, methods and jobs it names exist.
for p in $PAGES; do
        lines=$(python3 "$SUNKD_SRCDIR/tests/lib/man-snippets.py" commands "$SUNKD_SRCDIR/man/$p.in") ||
                bail_out "cannot read the commands of man/$p.in"
        while IFS=$'\t' read -r line words; do
                [ -n "$line" ] || continue
                eval "set -- $words"
                prog=$1
                shift
                [ $# -gt 0 ] || continue # the program named
                case "$prog" in
                sunkctl) r=$(sunkctl_check "$@"; echo "rc=$?") ;;
                sunkd) r=$(sunkd_check "$@"; echo "rc=$?") ;;
                *sunkd-authkeys) r=$(authkeys_check "$@"; echo "rc=$?") ;;
                esac
                is "$r" "rc=0" "man/$p.in:$line: $prog $*"
        done <<< "$lines"
done

# Configuration keys, from the page to the code: every key a tag of
# sunkd.yaml.5 documents is in the key table it belongs to.
yaml_tags() {
        python3 "$SUNKD_SRCDIR/tests/lib/man-snippets.py" tags "$SUNKD_SRCDIR/man/sunkd.yaml.5.in" "$1"
}
# tags_in SECTION WHAT KEYS: each key SECTION's tags name is one of KEYS.
tags_in() {
        local k t
        t=$(yaml_tags "$1")
        [ -n "$t" ] || bail_out "no keys found in sunkd.yaml.5's $1"
        for k in $t; do
                ok "sunkd.yaml.5's $2 key '$k' is in the code's table" grep -qx -- "$k" <<< "$(printf '%s\n' $3)"
        done
}
tags_in 'TOP-LEVEL KEYS' top-level "$top"
tags_in 'MODULE SECTIONS' module "$mod"
tags_in 'THE NSSCACHE MODULE' nsscache "$yaml $maps"
tags_in 'THE AUTHKEYS MODULE' authkeys "$ak"
tags_in 'THE GRES MODULE' gres "$gr"
tags_in 'THE HEALTH MODULE' health "$hk $types"
tags_in 'THE PROLOG MODULE' prolog "$pk"

done_testing
