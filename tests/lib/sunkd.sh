# Start and stop a real sunkd in a private directory (sourced after tap.sh).
#
# sunkd_setup            make $T (temp dir), the module dir, a base config
# sunkd_config TEXT      write $T/sunkd.yaml (socket, state dir and module dir are filled in)
# sunkd_start [ARGS]     start sunkd in the background, wait for its socket
# sunkd_stop             SIGTERM and wait; $SUNKD_EXIT holds the exit code
# ctl ARGS               sunkctl against this instance

: "${SUNKD_BUILDDIR:?SUNKD_BUILDDIR must be set (run through make check)}"
: "${SUNKD_SRCDIR:?SUNKD_SRCDIR must be set (run through make check)}"

SUNKD_SRCDIR=$(cd "$SUNKD_SRCDIR" && pwd -P)
SUNKD="$SUNKD_BUILDDIR/agent/sunkd"
SUNKCTL="$SUNKD_BUILDDIR/agent/sunkctl"
TESTMOD_DIR="$SUNKD_BUILDDIR/tests/modules/.libs"

sunkd_setup() {
        T=$(mktemp -d /tmp/sunkd-test.XXXXXX) || bail_out "mktemp failed"
        chmod 755 "$T"
        SOCK="$T/run/io.sunkd"
        MODDIR="$T/modules"
        mkdir -p "$MODDIR" "$T/state"
        chmod 755 "$MODDIR"
        for m in testmod badabi notmodule noreload abi10; do
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

# Waits up to $2 tenths of a second for the file $1 to exist.
wait_for_file() {
        local i=0
        while [ ! -e "$1" ] && [ $i -lt "${2:-100}" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        [ -e "$1" ]
}

sunkd_start() {
        "$SUNKD" -c "$T/sunkd.yaml" "$@" 2> "$T/sunkd.log" &
        SUNKD_PID=$!
        if ! wait_for_file "$SOCK" 100; then
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

ctl() {
        "$SUNKCTL" -s "$SOCK" "$@"
}

# Waits until `ctl jobs --json` shows job $1 with at least $2 runs.
wait_runs() {
        local i=0
        while [ $i -lt "${3:-100}" ]; do
                n=$(ctl --json jobs | python3 -c "import json,sys; print(next((j['runs'] for j in json.load(sys.stdin)['jobs'] if j['name']=='$1'), 0))")
                [ "$n" -ge "$2" ] && return 0
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}
