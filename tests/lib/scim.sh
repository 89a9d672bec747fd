# Start the SCIM fixture server on loopback (sourced after tap.sh).
#
# scim_start DATA.json [ARGS]   serve DATA; $SCIM_URL, $SCIM_PID, $SCIM_LOG set
# scim_stop
# scim_reload                   serve DATA as the file holds it now (SIGHUP, waits until served)
# scim_token                    write $T/token (0600) with the fixture's token
# nsscache_config [KEYS]        write $T/sunkd.yaml: the nsscache module with the example
#                               nsscache.conf against $SCIM_URL, caches in $T/cache, timestamps
#                               in $T/ts, token $T/token, interval 1h, splay 0s, then KEYS (more
#                               lines of the section, each after the first indented by 4)

scim_start() {
        local data=$1; shift
        command -v python3 >/dev/null || bail_out "python3 is needed for the SCIM fixture"
        rm -f "$T/scim.port"
        SCIM_LOG="$T/scim-requests.log"
        SCIM_RELOADS=0
        : > "$SCIM_LOG"
        python3 "$SUNKD_SRCDIR/tests/lib/scim-server.py" --data "$data" --port-file "$T/scim.port" \
                --log "$SCIM_LOG" --token test-token "$@" 2> "$T/scim.err" &
        SCIM_PID=$!
        wait_for_file "$T/scim.port" 600 || { cat "$T/scim.err" | sed 's/^/# /'; bail_out "SCIM fixture did not start"; }
        sleep 0.1
        SCIM_URL="http://127.0.0.1:$(cat "$T/scim.port")/scim/v2"
}

scim_stop() {
        [ -n "${SCIM_PID:-}" ] && kill "$SCIM_PID" 2>/dev/null && wait "$SCIM_PID" 2>/dev/null
        SCIM_PID=
}

SCIM_RELOADS=0
scim_reload() {
        SCIM_RELOADS=$((SCIM_RELOADS + 1))
        kill -HUP "$SCIM_PID" || bail_out "the SCIM fixture is gone"
        wait_until 600 grep -qx "RELOADED $SCIM_RELOADS" "$SCIM_LOG" || bail_out "the SCIM fixture did not reload"
}

scim_token() {
        printf 'test-token\n' > "$T/token"
        chmod 600 "$T/token"
}

nsscache_config() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: $T/cache
    timestamp_dir: $T/ts
    token_file: $T/token
    interval: 1h
    splay: 0s
    ${1:-}"
}
