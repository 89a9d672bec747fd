# Minimal TAP for the integration tests (sourced).
#
# plan N | ok COND-DESC | is GOT WANT DESC | like TEXT REGEX DESC | bail_out MSG | done_testing
# A missing companion is bail_out, never a skip: a test that cannot run fails.

TAP_N=0
TAP_FAILED=0

plan() { echo "1..$1"; }

_tap_result() {
        TAP_N=$((TAP_N + 1))
        if [ "$1" -eq 0 ]; then
                echo "ok $TAP_N - $2"
        else
                echo "not ok $TAP_N - $2"
                TAP_FAILED=$((TAP_FAILED + 1))
        fi
}

# ok DESC CMD...: passes when CMD exits 0.
ok() {
        local desc="$1"; shift
        if "$@"; then _tap_result 0 "$desc"; else _tap_result 1 "$desc"; fi
}

# nok DESC CMD...: passes when CMD exits non-zero.
nok() {
        local desc="$1"; shift
        if "$@"; then _tap_result 1 "$desc"; else _tap_result 0 "$desc"; fi
}

is() {
        if [ "$1" = "$2" ]; then
                _tap_result 0 "$3"
        else
                _tap_result 1 "$3"
                printf '# got:      %s\n# expected: %s\n' "$1" "$2" | head -20
        fi
}

like() {
        if printf '%s' "$1" | grep -E -q -- "$2"; then
                _tap_result 0 "$3"
        else
                _tap_result 1 "$3"
                printf '# text did not match /%s/:\n' "$2"
                printf '%s\n' "$1" | head -20 | sed 's/^/#   /'
        fi
}

unlike() {
        if printf '%s' "$1" | grep -E -q -- "$2"; then
                _tap_result 1 "$3"
                printf '# text matched /%s/:\n' "$2"
                printf '%s\n' "$1" | head -20 | sed 's/^/#   /'
        else
                _tap_result 0 "$3"
        fi
}

diag() { printf '# %s\n' "$*"; }

bail_out() {
        echo "Bail out! $*"
        exit 1
}

done_testing() {
        echo "1..$TAP_N"
        [ "$TAP_FAILED" -eq 0 ]
}
