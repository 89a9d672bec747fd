# The scim-dump tests: run the nsscache SCIM source (tests/lib/scim-dump) against
# the SCIM fixture, with a minimal TAP of their own (sourced; set TEST_NAME first).
#
# start_server NAME ARGS | dump ARGS | has LINE | has_re RE | requests PATTERN | check DESC CMD

B=${SUNKD_BUILDDIR:?}
S=${SUNKD_SRCDIR:?}
DUMP=$B/tests/lib/scim-dump
SERVER=$S/tests/lib/scim-server.py
CONF=$S/etc/nsscache.conf.example
T=$(mktemp -d "/tmp/sunkd-${TEST_NAME:-scim}.XXXXXX")
PIDS=()
n=0
fail=0

cleanup() {
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
        rm -rf "$T"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # description, command...
        local d=$1; shift
        if "$@"; then ok "$d"; else not_ok "$d" "output:" "$(sed 's/^/#   /' "$T/out" 2>/dev/null)"; fi
}

command -v python3 >/dev/null || { echo "Bail out! python3 not found"; exit 1; }
[ -x "$DUMP" ] || { echo "Bail out! $DUMP not built"; exit 1; }

# start_server NAME ARGS...: starts the fixture, sets PORT and LOG.
start_server() {
        local name=$1; shift
        LOG=$T/$name.log
        : >"$LOG"
        rm -f "$T/$name.port"
        python3 "$SERVER" --port-file "$T/$name.port" --log "$LOG" "$@" &
        PIDS+=($!)
        # a loaded machine may take long to start python: wait while it lives
        for _ in $(seq 1 1200); do
                [ -s "$T/$name.port" ] && break
                kill -0 "${PIDS[-1]}" 2>/dev/null || break
                sleep 0.05
        done
        [ -s "$T/$name.port" ] || { echo "Bail out! SCIM fixture '$name' did not start"; exit 1; }
        PORT=$(cat "$T/$name.port")
}

# dump ARGS...: runs scim-dump against the current server; output in $T/out.
dump() {
        NSSCACHE_SCIM_AUTH_TOKEN=${TOKEN:-test-token} "$DUMP" \
                -o "scim_base_url=http://127.0.0.1:$PORT/scim/v2" \
                -o scim_retry_delay=0.05 "$@" "$CONF" >"$T/out" 2>&1
        RC=$?
}
has() { grep -qxF -- "$1" "$T/out"; }
has_re() { grep -qE -- "$1" "$T/out"; }
requests() { grep -c "$1" "$LOG"; }
