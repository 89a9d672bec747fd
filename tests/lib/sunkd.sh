# Start and stop a real sunkd in a private directory (sourced after tap.sh).
#
# sunkd_setup            make $T (temp dir), the module dir, a base config
# sunkd_config TEXT      write $T/sunkd.yaml (socket, state dir and module dir are filled in)
# sunkd_start [ARGS]     start sunkd in the background, wait for its socket
# sunkd_stop             SIGTERM and wait; $SUNKD_EXIT holds the exit code
# ctl ARGS               sunkctl against this instance
# sunkd_hup              SIGHUP, then wait until the log shows the reload's verdict
# log_mark / log_since   what sunkd logged after the mark (checks see only that)
# wait_log REGEX         wait until a line logged since the mark matches
# wait_until N CMD...    poll CMD every 0.1 s, at most N times, until it succeeds
# job_field JOB FIELD    one field of `ctl --json jobs` for JOB
# module_status MOD FIELD  one field of module MOD's status (booleans as true/false)
# health_field CHECK FIELD one field of the health check CHECK in `ctl --json health`
#                        (booleans as true/false)
# health_run CHECK       run the health check CHECK now (`ctl run health.CHECK`); its status
# status_without RE DESC a TAP check: the daemon answers status, no line matches RE
# gate_config [YAML]     sunkd_config with testmod's readiness gate: its first testmod.ok
#                        run holds sunkd not ready until $GATE/release.ok exists; YAML:
#                        more modules.  gate_running: that run is under way
#
# Waits are bounded by a count of polls, not a deadline, and the bounds are
# generous: a loaded machine makes them slower, never wrong.

: "${SUNKD_BUILDDIR:?SUNKD_BUILDDIR must be set (run through make check)}"
: "${SUNKD_SRCDIR:?SUNKD_SRCDIR must be set (run through make check)}"

SUNKD_SRCDIR=$(cd "$SUNKD_SRCDIR" && pwd -P)
SUNKD="$SUNKD_BUILDDIR/agent/sunkd"
SUNKCTL="$SUNKD_BUILDDIR/agent/client/sunkctl"
TESTMOD_DIR="$SUNKD_BUILDDIR/tests/modules/.libs"

sunkd_setup() {
        # sunkd refuses group-writable directories on the way to what it reads and writes
        umask 022
        T=$(mktemp -d /tmp/sunkd-test.XXXXXX) || bail_out "mktemp failed"
        chmod 755 "$T"
        SOCK="$T/run/io.sunkd"
        MODDIR="$T/modules"
        mkdir -p "$MODDIR" "$T/state"
        chmod 755 "$MODDIR"
        for m in testmod badabi notmodule noreload abi10 abi12; do
                [ -f "$TESTMOD_DIR/$m.so" ] || bail_out "test module $m.so not built in $TESTMOD_DIR"
                cp "$TESTMOD_DIR/$m.so" "$MODDIR/$m.so"
        done
        trap 'sunkd_cleanup' EXIT
}

sunkd_cleanup() {
        if [ -n "${SUNKD_PID:-}" ] && kill -0 "$SUNKD_PID" 2>/dev/null; then
                kill -KILL "$SUNKD_PID" 2>/dev/null
        fi
        [ -n "${T:-}" ] && rm -rf "$T"
}

sunkd_config() {
        {
                echo "socket: $SOCK"
                echo "state_dir: $T/state"
                echo "module_dir: $MODDIR"
                printf '%s\n' "$1"
        } > "$T/sunkd.yaml"
        chmod 644 "$T/sunkd.yaml"
}

# Polls CMD... every tenth of a second, at most $1 times, until it succeeds.
wait_until() {
        local n="$1" i=0
        shift
        until "$@"; do
                i=$((i + 1))
                [ $i -ge "$n" ] && return 1
                sleep 0.1
        done
}

# Waits (at most $2 polls, 30 s unloaded) for the file $1 to exist.
wait_for_file() {
        wait_until "${2:-300}" test -e "$1"
}

sunkd_start() {
        "$SUNKD" -c "$T/sunkd.yaml" "$@" 2> "$T/sunkd.log" &
        SUNKD_PID=$!
        if ! wait_for_file "$SOCK" 300; then
                cat "$T/sunkd.log" | sed 's/^/# /'
                bail_out "sunkd did not create its socket"
        fi
}

sunkd_stop() {
        kill -TERM "$SUNKD_PID" 2>/dev/null
        wait "$SUNKD_PID"
        SUNKD_EXIT=$?
        SUNKD_PID=
}

# `run` waits for its job; a test's never waits for ever (a hung job fails it).
ctl() {
        case " $* " in
        *" run "*) "$SUNKCTL" -s "$SOCK" --timeout "${SUNKD_RUN_TIMEOUT:-300}" "$@" ;;
        *) "$SUNKCTL" -s "$SOCK" "$@" ;;
        esac
}

# Prints field $2 of job $1 from `ctl --json jobs` (empty if either is absent).
job_field() {
        ctl --json jobs | python3 -c "
import json, sys
j = [j for j in json.load(sys.stdin)['jobs'] if j['name'] == sys.argv[1]]
print(j[0].get(sys.argv[2], '') if j else '')" "$1" "$2"
}

module_status() {
        ctl --json status | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["modules"] if m["name"] == sys.argv[1]]
v = m[0].get("status", {}).get(sys.argv[2], "") if m else ""
print(json.dumps(v, sort_keys=True) if isinstance(v, (bool, dict, list)) else v)' "$1" "$2"
}

health_field() {
        ctl --json health | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["checks"] if c["name"] == sys.argv[1]][0]
v = c[sys.argv[2]]
print(json.dumps(v) if isinstance(v, bool) else v)' "$1" "$2"
}

health_run() {
        ctl run "health.$1" > /dev/null
}

job_runs_at_least() {
        local n
        n=$(job_field "$1" runs)
        [ -n "$n" ] && [ "$n" -ge "$2" ]
}

# Waits until `ctl jobs --json` shows job $1 with at least $2 runs.
wait_runs() {
        wait_until "${3:-300}" job_runs_at_least "$1" "$2"
}

# log_mark remembers how much sunkd has logged; log_since prints what came
# after, so a check cannot match a line an earlier step produced.
log_mark() {
        LOG_MARK=$(stat -c %s "${1:-$T/sunkd.log}") || bail_out "no log to mark"
        LOG_MARKED="${1:-$T/sunkd.log}"
}

log_since() {
        tail -c +$((${LOG_MARK:?log_mark first} + 1)) "$LOG_MARKED"
}

log_since_has() {
        log_since | grep -E -q -- "$1"
}

# Waits (at most $2 polls) until a line logged since log_mark matches $1.
wait_log() {
        wait_until "${2:-300}" log_since_has "$1"
}

# SIGHUP, then wait for the verdict: the reload is over, applied or refused.
# Afterwards log_since shows what the reload logged.
sunkd_hup() {
        log_mark
        kill -HUP "$SUNKD_PID"
        wait_log "Configuration reloaded\.|keeping the running" ||
                diag "no reload verdict in the log after SIGHUP"
}

# A TAP check that the daemon answers `status` and no line matches $1: a
# dead daemon prints nothing, which must not pass as "not listed".
status_without() {
        local out rc
        out=$(ctl status 2>&1); rc=$?
        if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^config:'; then
                _tap_result 1 "$2"
                diag "sunkctl status failed (exit $rc): $out"
                return
        fi
        unlike "$out" "$1" "$2"
}

gate_config() {
        GATE="$T/gate"
        mkdir -p "$GATE"
        sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s
    ready_gate: true
    gate_dir: $GATE${1:+
$1}"
}

gate_running() {
        [ "$(job_field testmod.ok state)" = running ]
}
