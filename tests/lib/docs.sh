# What the code registers and the programs accept, for the tests that hold
# the documentation to it (sourced after tap.sh and sunkd.sh).
#
# code_methods           the socket methods agent/ and modules/ register, io.sunkd.<Iface>.<Verb>
# code_errors            the error names they answer (io.sunkd.X, org.varlink.service.X)
# code_verbs             sunkctl's own commands with the number of words each takes ("run 1")
# code_default_verbs     "module verb" for each module `sunkctl MODULE` alone calls (gres list)
# code_view_flags        "--flag method" for each flag of the modules' sunkctl views
#                        (modules/*/*-render.c), the method it goes with
# code_jobs              the jobs the modules register (nsscache.refresh ...)
# sunkctl_method M V     the method `sunkctl M V` calls
# sunkctl_check WORD...  the words after "sunkctl" make a command that exists, with options
#                        sunkctl has: nothing printed and 0, or the reason and 1.  It also runs
#                        them against a socket nobody listens on: sunkctl must get as far as
#                        connecting (exit 3), never stop at a usage error (exit 2)
# sunkd_check WORD...    the same for sunkd's options (run only for --help and --version)
# authkeys_check WORD... the same for sunkd-authkeys (run with its socket and cache missing,
#                        sshd's %-tokens filled in: exit 0 or 1, never 2)

DOCS_NOSOCK="${T:?docs.sh needs \$T (sunkd_setup)}/docs-nobody-listens.sock"
AKBIN="$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys"

# The sources as tokens (tests/lib/c-scan.py), so that how a line is broken never matters.
# c_flat PATH...: each .c file under PATH on one line.  c_rows PATH... NAME: the elements of
# the C array NAME[] defined under PATH, one per line.  PATHs are relative to the source tree.
c_flat() {
        local p a=()
        for p in "$@"; do a+=("$SUNKD_SRCDIR/$p"); done
        python3 "$SUNKD_SRCDIR/tests/lib/c-scan.py" flat "${a[@]}"
}
c_rows() {
        local p a=() n=$#
        for p in "${@:1:n-1}"; do a+=("$SUNKD_SRCDIR/$p"); done
        python3 "$SUNKD_SRCDIR/tests/lib/c-scan.py" rows "${a[@]}" "${!n}"
}

_code_methods() {
        printf '%s\n' "$FLAT_AGENT" "$FLAT_MODULES" | grep -oE '(\{ *|\.name *= *)"io\.sunkd\.[A-Za-z]+\.[A-Za-z]+", *(SUNKD|IPC)_METHOD_' |
                grep -oE 'io\.sunkd\.[A-Za-z]+\.[A-Za-z]+' | sort -u
}

_code_errors() {
        printf '%s\n' "$FLAT_AGENT" "$FLAT_MODULES" | grep -oE '"(io\.sunkd|org\.varlink\.service)\.[A-Z][A-Za-z]+"' | tr -d '"' | sort -u
}

_code_verbs() {
        c_rows agent/client/sunkctl.c verbs |
                sed -n -E 's/^ *\{ "([a-z][a-z-]*)", verb_[a-z_]+, "[A-Z ]*", (-?[0-9]+),.*/\1 \2/p'
}

# view_field FIELD: "module value" for each module's sunkctl view (its
# render file's SunkctlView) that sets .FIELD to a string.
_view_field() {
        local f m v flat
        for f in "$SUNKD_SRCDIR"/modules/*/*-render.c; do
                flat=$(c_flat "${f#"$SUNKD_SRCDIR"/}")
                m=$(grep -oE '\.module = "[a-z-]+"' <<< "$flat" | cut -d'"' -f2)
                v=$(grep -oE "\\.$1 = \"[A-Za-z-]+\"" <<< "$flat" | cut -d'"' -f2)
                if [ -n "$m" ] && [ -n "$v" ]; then echo "$m $v"; fi
        done
}


_code_view_flags() {
        local f m
        for f in "$SUNKD_SRCDIR"/modules/*/*-render.c; do
                f=${f#"$SUNKD_SRCDIR"/}
                m=$(c_flat "$f" | grep -oE '\.module = "[a-z-]+"' | cut -d'"' -f2)
                [ -n "$m" ] || continue
                c_rows "$f" flags |
                        sed -n -E 's/^ *\{ "([a-z-]+)", (NULL|"[A-Z]+"), "([a-z-]+)",.*/\1 \3/p' |
                        while read -r flag verb; do
                                echo "--$flag $(sunkctl_method "$m" "$verb")"
                        done
        done
}

_code_jobs() {
        printf '%s\n' "$FLAT_MODULES" | grep -oE '\.name = "[a-z0-9_-]+\.[a-z0-9_.-]+"' |
                cut -d'"' -f2 | sort -u
}

# What the code has, read once.
FLAT_AGENT=$(c_flat agent)
FLAT_MODULES=$(c_flat modules)
VIEW_INTERFACE=$(_view_field interface)
VIEW_DEFAULT_VERB=$(_view_field default_verb)
view_field() {
        case "$1" in
        interface) printf '%s\n' "$VIEW_INTERFACE" ;;
        default_verb) printf '%s\n' "$VIEW_DEFAULT_VERB" ;;
        *) _view_field "$1" ;;
        esac
}
code_default_verbs() {
        view_field default_verb
}

# capitalise WORD: each part of WORD, joined by '-', with its first letter in capitals, the '-' gone.
capitalise() {
        local p out=
        local IFS=-
        for p in $1; do
                out="$out${p^}"
        done
        printf '%s\n' "$out"
}

sunkctl_method() {
        local iface
        iface=$(view_field interface | sed -n "s/^$1 //p")
        printf 'io.sunkd.%s.%s\n' "${iface:-$(capitalise "$1")}" "$(capitalise "$2")"
}

# help_options HELP: "-x" or "--long" per option of a --help text, "=" after one that takes a
# value ("--socket=PATH" or "--socket PATH").
help_options() {
        printf '%s\n' "$1" | grep -E '^ +-' | while read -r line; do
                local takes=
                printf '%s\n' "$line" | grep -qE -- '^(-[a-zA-Z], )?--[a-z-]+(=| [A-Z])' && takes="="
                for o in $(printf '%s\n' "$line" | grep -oE -- '^(-[a-zA-Z], )?--[a-z][a-z-]*' | tr -d ','); do
                        echo "$o$takes"
                done
        done
}

# split_options OPTS WORD...: sets ARGS to the words that are not options, VIEWS to the
# options given; prints why and fails on an option OPTS does not have.
split_options() {
        local opts=$1 w
        shift
        ARGS=() VIEWS=()
        while [ $# -gt 0 ]; do
                w=$1
                shift
                case "$w" in
                --) ARGS+=("$@"); break ;;
                --*=*)
                        grep -qx -- "${w%%=*}=" <<< "$opts" || { echo "no option ${w%%=*}=VALUE"; return 1; } ;;
                -?*)
                        if grep -qx -- "$w=" <<< "$opts"; then
                                [ $# -gt 0 ] || { echo "$w needs a value"; return 1; }
                                shift
                        elif grep -qx -- "$w" <<< "$opts"; then
                                VIEWS+=("$w")
                        else
                                echo "no option $w"
                                return 1
                        fi ;;
                *) ARGS+=("$w") ;;
                esac
        done
}

is_placeholder() {
        [[ $1 =~ ^[A-Z][A-Z_]*$ ]]
}

CODE_METHODS=$(_code_methods)
CODE_ERRORS=$(_code_errors)
CODE_VERBS=$(_code_verbs)
CODE_VIEW_FLAGS=$(_code_view_flags)
CODE_JOBS=$(_code_jobs)
[ -n "$CODE_METHODS" ] && [ -n "$CODE_ERRORS" ] && [ -n "$CODE_VERBS" ] && [ -n "$CODE_JOBS" ] ||
        bail_out "cannot read the methods, errors, sunkctl commands or jobs from agent/ and modules/"
code_methods() { printf '%s\n' "$CODE_METHODS"; }
code_errors() { printf '%s\n' "$CODE_ERRORS"; }
code_verbs() { printf '%s\n' "$CODE_VERBS"; }
code_view_flags() { printf '%s\n' "$CODE_VIEW_FLAGS"; }
code_jobs() { printf '%s\n' "$CODE_JOBS"; }

SUNKCTL_OPTS=$(help_options "$("$SUNKCTL" --help)")
SUNKD_OPTS=$(help_options "$("$SUNKD" --help)")
AUTHKEYS_OPTS=$(help_options "$("$AKBIN" --help)")
[ -n "$SUNKCTL_OPTS" ] && [ -n "$SUNKD_OPTS" ] && [ -n "$AUTHKEYS_OPTS" ] ||
        bail_out "cannot read the options of sunkctl, sunkd or sunkd-authkeys --help"

sunkctl_check() {
        local n verb method view rc orig=("$@")
        split_options "$SUNKCTL_OPTS" "$@" || return 1
        set -- "${ARGS[@]}"
        if [ $# -eq 0 ]; then
                return 0 # the program alone, --help or --version
        fi
        n=$(code_verbs | sed -n "s/^$1 //p")
        if [ -n "$n" ]; then
                [ $(($# - 1)) -eq "$n" ] || { echo "'$1' takes $n word(s)"; return 1; }
                if [ "$1" = run ] && ! is_placeholder "$2"; then
                        code_jobs | grep -qx -- "$2" || { echo "no module registers a job '$2'"; return 1; }
                fi
                for view in "${VIEWS[@]}"; do
                        code_view_flags | grep -q -- "^$view " && { echo "$view is not for '$1'"; return 1; }
                done
        elif is_placeholder "$1"; then
                return 0 # MODULE VERB
        else
                # a view flag named as its verb stands for it (sunkctl-view.h):
                # `sunkctl prolog --list KEY=VALUE` is `sunkctl prolog list ...`
                for view in "${VIEWS[@]}"; do
                        [ $# -lt 2 ] || [[ $2 == *=* ]] || break
                        code_view_flags | grep -qx -- "$view $(sunkctl_method "$1" "${view#--}")" &&
                                set -- "$1" "${view#--}" "${@:2}"
                done
                verb=${2:-$(code_default_verbs | sed -n "s/^$1 //p")}
                [ -n "$verb" ] || { echo "'$1' is no command, and no module's method without a verb"; return 1; }
                method=$(sunkctl_method "$1" "$verb")
                code_methods | grep -qx -- "$method" || { echo "'$1 $verb' calls $method, which nothing registers"; return 1; }
                shift $(($# < 2 ? $# : 2))
                for w in "$@"; do
                        [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "'$w' is not KEY=VALUE"; return 1; }
                done
                for view in "${VIEWS[@]}"; do
                        code_view_flags | grep -q -- "^$view " || continue
                        code_view_flags | grep -qx -- "$view $method" || { echo "$view is not for $method"; return 1; }
                done
        fi
        SUNKD_SOCKET="$DOCS_NOSOCK" "$SUNKCTL" -s "$DOCS_NOSOCK" -t 5 "${orig[@]}" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 3 ] || { echo "against a socket nobody listens on it exits $rc, not 3"; return 1; }
}

sunkd_check() {
        split_options "$SUNKD_OPTS" "$@" || return 1
        [ ${#ARGS[@]} -eq 0 ] || { echo "sunkd takes no argument: '${ARGS[0]}'"; return 1; }
        case " $* " in
        *" --help "*|*" -h "*|*" --version "*)
                "$SUNKD" "$@" >/dev/null 2>&1 || { echo "exits $?"; return 1; } ;;
        esac
}

authkeys_check() {
        local words=() w rc
        [ $# -gt 0 ] || return 0 # the program named
        split_options "$AUTHKEYS_OPTS" "$@" || return 1
        [ ${#ARGS[@]} -ge 1 ] && [ ${#ARGS[@]} -le 3 ] || { echo "takes USER [FINGERPRINT | TYPE KEY]"; return 1; }
        # sshd's tokens as sshd fills them in; a user no node has.
        for w in "$@"; do
                w=${w//%U/4242424}
                w=${w//%u/docs-nobody}
                w=${w//%f/SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU}
                w=${w//%t/ssh-ed25519}
                w=${w//%k/AAAAC3NzaC1lZDI1NTE5AAAAIBogusKeyForTheDocsTest0000000000000000000}
                words+=("$w")
        done
        "$AKBIN" -s "$DOCS_NOSOCK" -c "$T/docs-no-sshkey.cache" -t 1 "${words[@]}" >/dev/null 2>&1
        rc=$?
        [ $rc -le 1 ] || { echo "with the socket and the cache missing it exits $rc, not 0 or 1"; return 1; }
}
