#!/bin/bash
# make bench: every figure next to a reference measured in the same run.
#
#   agent idle       sunkd with testmod (job interval 1h) and, at the same time,
#                    sunkd without modules: RSS and context switches (wake-ups)
#                    of all their threads over BENCH_IDLE_SECONDS (10)
#   ping             bench-ping, 2 threads, a new connection per query, for
#                    BENCH_PING_SECONDS (3): sunkd, then bench-echo; the client
#                    shuts down its sending side after the call, as sunkctl and
#                    sunkd-authkeys do; then both again with -k (the client
#                    keeps its side open, as a generic Varlink client may)
#   ping, job busy   1 thread while testmod.block holds a worker for 2 s,
#                    then the same with no job running
#   nsscache         for each of BENCH_NSSCACHE_SIZES users (1000 10000 100000;
#                    one group per 10 users, page size 100) served by the SCIM
#                    fixture: bench-nsscache (fetch, map, render, publish; the
#                    median of 3 runs by wall time), then curl sending the
#                    same requests over one connection (median of 3); for
#                    BENCH_NSSCACHE_DAEMON_USERS (100000) the CPU time json-c
#                    alone takes to parse those pages, saved first
#                    (bench-jsonc, median of 3), and the module inside
#                    sunkd: a first run; three where nothing changed,
#                    forced so that each maps every page (the median); one
#                    more that leaves the memo of an unchanged run; three
#                    that replay its requests (the median); the daemon's
#                    peak RSS during each and its RSS after (the highest),
#                    next to its idle RSS before the first; then
#                    bench-nsscache and curl once each against a fixture that
#                    takes BENCH_NSSCACHE_PAGE_LATENCY_MS (5) over every page
#   spawn            bench-spawn: /bin/true through the SpawnSet until its
#                    callback, BENCH_SPAWN_RUNS (300) times, alternating with
#                    plain fork+exec+waitpid in the same process; once small
#                    and once with 100 MB of heap resident
#   authkeys         BENCH_AUTHKEYS_USERS (100000) users with two keys each:
#                    the map's build time and memory (bench-authkeys-map, 5
#                    builds); sunkd with the authkeys module serving them:
#                    sunkd-authkeys run BENCH_AUTHKEYS_RUNS (2000) times
#                    (bench-exec: fork, exec, answer) interleaved with
#                    /bin/true (the floor) and with grep -m1 over the cache
#                    (what a key command that scans the file costs); Get
#                    queries per second, a new connection each (bench-ping,
#                    2 threads); Get p99 while the map is rebuilt again and
#                    again (the file touched every 0.2 s), next to idle;
#                    and Get p99 while the nsscache module of the same sunkd
#                    refreshes BENCH_AUTHKEYS_USERS users from the SCIM
#                    fixture, again and again (forced: each maps every page)
#   health           sunkctl health run's call (bench-ping -m io.sunkd.Health.Run,
#                    one at a time, BENCH_HEALTH_SECONDS (5)): ten built-in
#                    checks, the file-system ones each in a kept child
#                    (SUNKD_JOB_CHILD_REUSE), in a small sunkd and in one
#                    holding 100 MB (testmod's ballast), and the big one's
#                    time over the small one's; the reference, in the same
#                    run, tests/bench/nhc-like.sh doing the same ten checks
#                    as an NHC-style shell script (bench-exec, 200 runs), a
#                    lower bound of what NHC itself costs
#   health xid       a one-node Slurm (munged, slurmctld, a dynamic slurmd) and
#                    a sunkd whose gres module reads a kernel-log stand-in (a
#                    FIFO) and whose gpu check drains through scontrol: an
#                    NVRM Xid 79 line written to the stand-in until `sinfo -R`
#                    shows the drain, polled every 10 ms, BENCH_XID_RUNS (5)
#                    times (the XID policy holds it 2 s, then the node is
#                    resumed); the reference, in the same run, `scontrol
#                    update ... state=drain` until `sinfo -R` shows it
#   prolog           sunkd-prolog against a sunkd whose prolog directory holds
#                    5 trivial scripts, BENCH_PROLOG_RUNS (300) times, through
#                    bench-exec, interleaved with the reference: the same 5
#                    run by bench-runparts, a run-parts in C; the row is the
#                    difference of the p50s
#   gres             bench-gres: discovery of the fake NVML's 8 H100s (the
#                    library loaded and unloaded each time, as the module's
#                    child does) and of the /proc fallback tree, 200 each
#   fleet            BENCH_FLEET_NODES (200) sunkds following one producer's
#                    signed export of BENCH_FLEET_USERS (100000) users through
#                    nginx on 127.0.0.1, interval and splay BENCH_FLEET_INTERVAL
#                    (30) s: from nginx's access log, the requests and bytes of a
#                    run with nothing changed (and the nodes' CPU), per node after
#                    one user changed and after every user changed, the time
#                    until every node's status shows each change, and the
#                    requests a second 10,000 nodes would send every 15 minutes
#   ldap             tests/bench/ldap-bench.sh: BENCH_LDAP_USERS (100000) users
#                    and a group per 100 from one slapd on 127.0.0.1, one full
#                    refresh of sunkd's ldap source (in a sunkd) against one
#                    `nsscache update --full` of Debian 13's packaged nsscache,
#                    run in the Debian 13 root of make deps ($BENCH_TRIXIE_ROOT,
#                    /opt/sunkd-test/trixie; needs root); the four maps of both
#                    must be the same bytes
#
# BENCH_ONLY="authkeys gres" runs only those.  Needs root for the busy-job and
# authkeys figures (root-only methods).
#
# Each row with a goal ends in met / not met (verdict.sh, tested by verdict.t,
# which runs first); the labels are those of the README's Performance table,
# and the Summary at the end is that table.  tests/bench/README.md says how
# each figure is reached.
set -u

: "${SUNKD_BUILDDIR:?run through make bench}"
: "${SUNKD_SRCDIR:?run through make bench}"
B=$SUNKD_BUILDDIR
S=$SUNKD_SRCDIR
# sunkd.sh: the paths of this build's programs, and wait_for_file.
. "$S/tests/lib/sunkd.sh"
S=$SUNKD_SRCDIR # sunkd.sh made it absolute, without "..": config paths must be
. "$S/tests/bench/verdict.sh"
TOOLS="$B/tests/bench"
IDLE_SECONDS=${BENCH_IDLE_SECONDS:-10}
PING_SECONDS=${BENCH_PING_SECONDS:-3}
SIZES=${BENCH_NSSCACHE_SIZES:-"1000 10000 100000"}
DAEMON_USERS=${BENCH_NSSCACHE_DAEMON_USERS:-100000}
PAGE_LATENCY_MS=${BENCH_NSSCACHE_PAGE_LATENCY_MS:-5}
SPAWN_RUNS=${BENCH_SPAWN_RUNS:-300}
HEALTH_SECONDS=${BENCH_HEALTH_SECONDS:-5}
XID_RUNS=${BENCH_XID_RUNS:-5}
AK_USERS=${BENCH_AUTHKEYS_USERS:-100000}
AK_RUNS=${BENCH_AUTHKEYS_RUNS:-2000}
PROLOG_RUNS=${BENCH_PROLOG_RUNS:-300}
LDAP_USERS=${BENCH_LDAP_USERS:-100000}
TRIXIE_ROOT=${BENCH_TRIXIE_ROOT:-/opt/sunkd-test/trixie}
TOKEN=bench-token

T=$(mktemp -d /tmp/sunkd-bench.XXXXXX) || exit 1
chmod 755 "$T"
PIDS=()
ROWS=()

cleanup() {
        for p in "${PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        wait 2>/dev/null
        rm -rf "$T" ${FLEET_DIR:+"$FLEET_DIR"}
}
trap cleanup EXIT

# stop PID: end one process this script started
stop() {
        local p keep=()
        kill "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        for p in "${PIDS[@]}"; do
                [ "$p" = "$1" ] || keep+=("$p")
        done
        PIDS=("${keep[@]}")
}

die() {
        echo "bench: $*" >&2
        exit 1
}

# line BENCHMARK RESULT REFERENCE GOAL MET: one row, aligned
line() {
        printf '%-54s %-22s %-58s %-24s %s\n' "$@"
}

# row BENCHMARK RESULT REFERENCE GOAL: printed with its verdict, and kept
# for the Summary
row() {
        local met
        met=$(verdict "$4" "$2" "$3") || die "the row '$1' has no verdict"
        ROWS+=("$1|$2|$3|$4|$met")
        line "$1" "$2" "$3" "$4" "$met"
}

# summary: the rows as the README's Markdown table
summary() {
        local r
        echo "| benchmark | result | reference (same run) | goal | met |"
        echo "| --- | --- | --- | --- | --- |"
        for r in "${ROWS[@]}"; do
                printf '| %s |\n' "${r//|/ | }"
        done
}

# val KEY "k=v k=v ...": the value of KEY
val() {
        sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<< "$2"
}

mb() {
        awk -v k="$1" 'BEGIN { printf "%.1f MB", k / 1024 }'
}

ms() { # microseconds as "N.NN ms"
        awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'
}

ratio() {
        awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

secs() {
        awk -v ms="$1" 'BEGIN { printf "%.3f s", ms / 1000 }'
}

# start_sunkd NAME MODULES: a sunkd in $T/NAME; sets PID and SOCK
start_sunkd() {
        local d="$T/$1"
        mkdir -p "$d/state" "$d/modules"
        chmod 755 "$d" "$d/modules"
        cp "$B/tests/modules/.libs/testmod.so" "$B/modules/authkeys/.libs/authkeys.so" \
           "$B/modules/nsscache/.libs/nsscache.so" "$B/modules/health/.libs/health.so" \
           "$B/modules/gres/.libs/gres.so" "$B/modules/prolog/.libs/prolog.so" "$d/modules/" ||
                die "the modules are not built"
        {
                echo "socket: $d/io.sunkd"
                echo "state_dir: $d/state"
                echo "module_dir: $d/modules"
                printf '%s\n' "$2"
        } > "$d/sunkd.yaml"
        chmod 644 "$d/sunkd.yaml"
        "$SUNKD" -c "$d/sunkd.yaml" 2> "$d/sunkd.log" &
        PID=$!
        PIDS+=("$PID")
        SOCK="$d/io.sunkd"
        wait_for_file "$SOCK" || { cat "$d/sunkd.log" >&2; die "sunkd did not start"; }
}

# Context switches of every thread of $1, voluntary and not.
ctxt_switches() {
        cat /proc/"$1"/task/*/status 2>/dev/null |
                awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}

rss_kb() {
        awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status
}

bench_idle() {
        local mod bare m0 b0 m1 b1
        start_sunkd idle "modules:
  testmod:
    interval: 1h"
        mod=$PID
        "$SUNKCTL" -s "$SOCK" run testmod.ok > /dev/null || die "testmod.ok failed"
        start_sunkd bare ""
        bare=$PID
        sleep 1
        m0=$(ctxt_switches $mod)
        b0=$(ctxt_switches $bare)
        sleep "$IDLE_SECONDS"
        m1=$(ctxt_switches $mod)
        b1=$(ctxt_switches $bare)
        row "idle: RSS, testmod loaded" "$(mb "$(rss_kb $mod)")" \
            "$(mb "$(rss_kb $bare)") (sunkd, no modules)" "<= 10 MB"
        row "idle: wake-ups in ${IDLE_SECONDS} s, all threads" "$((m1 - m0))" \
            "$((b1 - b0)) (sunkd, no modules)" "= 0"
        stop $mod
        stop $bare
}

bench_ping() {
        local out ref open openref echo echo_sock="$T/echo.sock"
        start_sunkd ping "modules:
  testmod:
    interval: 1h
    block: 2s"
        out=$("$TOOLS/bench-ping" -t 2 -d "$PING_SECONDS" "$SOCK") || die "bench-ping failed"
        "$TOOLS/bench-echo" "$echo_sock" &
        echo=$!
        PIDS+=($echo)
        wait_for_file "$echo_sock" || die "bench-echo did not start"
        ref=$("$TOOLS/bench-ping" -t 2 -d "$PING_SECONDS" "$echo_sock") || die "bench-ping failed"
        open=$("$TOOLS/bench-ping" -k -t 2 -d "$PING_SECONDS" "$SOCK") || die "bench-ping -k failed"
        openref=$("$TOOLS/bench-ping" -k -t 2 -d "$PING_SECONDS" "$echo_sock") || die "bench-ping -k failed"
        stop $echo
        [ "$(val errors "$out")" = 0 ] && [ "$(val errors "$open")" = 0 ] || die "ping errors: $out / $open"
        row "Ping, new connection each, 2 clients" "$(val qps "$out")/s" \
            "$(val qps "$ref")/s (echo server), $(ratio "$(val qps "$out")" "$(val qps "$ref")")x" ">= 0.8x echo"
        row "Ping latency p50 / p99" "$(val p50_us "$out") / $(val p99_us "$out") us" \
            "$(val p50_us "$ref") / $(val p99_us "$ref") us (echo server)" ""
        row "Ping, client keeps its side open" "$(val qps "$open")/s" \
            "$(val qps "$openref")/s (echo server), $(ratio "$(val qps "$open")" "$(val qps "$openref")")x" ""
}

# Runs on the sunkd bench_ping started (testmod with block: 2s).
bench_busy() {
        local idle busy ctl t0 t1
        if [ "$(id -u)" != 0 ]; then
                row "Ping p99 while a job blocks its worker 2 s" "n/a (needs root)" "" "<= 5 ms"
                return
        fi
        idle=$("$TOOLS/bench-ping" -t 1 -d 1.5 "$SOCK") || die "bench-ping failed"
        t0=$(date +%s%N)
        "$SUNKCTL" -s "$SOCK" run testmod.block > /dev/null &
        ctl=$!
        sleep 0.2
        busy=$("$TOOLS/bench-ping" -t 1 -d 1.5 "$SOCK") || die "bench-ping failed"
        wait $ctl || die "testmod.block failed"
        t1=$(date +%s%N)
        [ $(((t1 - t0) / 1000000)) -ge 1900 ] || die "testmod.block did not block"
        row "Ping p99 while a job blocks its worker 2 s" "$(awk -v u="$(val p99_us "$busy")" 'BEGIN { printf "%.2f ms", u / 1000 }')" \
            "$(awk -v u="$(val p99_us "$idle")" 'BEGIN { printf "%.2f ms", u / 1000 }') (no job running)" "<= 5 ms"
}

# median3 FILE KEY: the line of FILE with the median value of KEY
median3() {
        sed -n "s/.*\\b$2=\\([0-9.]*\\).*/\\1 &/p" "$1" | sort -n | sed -n '2s/^[^ ]* //p'
}

# start_scim N [ARGS...]: the SCIM fixture with N users (and ARGS); sets
# SCIM (its pid) and PORT
start_scim() {
        local n=$1
        shift
        rm -f "$T/scim.port"
        python3 "$S/tests/lib/scim-server.py" --generate "$n" --prerender --port-file "$T/scim.port" \
                --token "$TOKEN" "$@" 2> "$T/scim.err" &
        SCIM=$!
        PIDS+=("$SCIM")
        wait_for_file "$T/scim.port" 600 || { cat "$T/scim.err" >&2; die "SCIM fixture did not start"; }
        PORT=$(cat "$T/scim.port")
}

# run_bench_nsscache PORT: one bench-nsscache run into an empty cache
run_bench_nsscache() {
        rm -rf "$T/cache"
        mkdir -p "$T/cache"
        "$TOOLS/bench-nsscache" -k "$T/token" -d "$T/cache" -u "http://127.0.0.1:$1/scim/v2" \
                "$S/etc/nsscache.conf.example" || die "bench-nsscache failed"
}

# curl_config LOG PORT [DIR]: a curl config for the requests in LOG, each
# answer to /dev/null or, with DIR, the listing pages into numbered files there
curl_config() {
        awk -v p="$2" -v d="${3:-}" '/^GET / {
                if (d == "") printf "url = \"http://127.0.0.1:%s%s\"\noutput = \"/dev/null\"\n", p, $2
                else if ($2 !~ /\/ServiceProviderConfig$/)
                        printf "url = \"http://127.0.0.1:%s%s\"\noutput = \"%s/%05d.json\"\n", p, $2, d, NR
        }' "$1"
}

# curl_replay LOG PORT: the time curl's transfers of the requests in LOG take,
# over one connection (the sum of their time_total), and curl's CPU time
curl_replay() {
        local TIMEFORMAT='%3U %3S'
        curl_config "$1" "$2" > "$T/curl.cfg"
        { time curl -s -K "$T/curl.cfg" -H "Authorization: Bearer $TOKEN" \
                -w '%{http_code} %{time_total} %{url_effective}\n' > "$T/curl.w"; } 2> "$T/curl.time" || return 1
        # The fixture predates RFC 9865 by default: /ServiceProviderConfig is 404, as the refresh saw it.
        awk -v cpu="$(awk '{ print ($1 + $2) * 1000 }' "$T/curl.time")" \
            '$1 != 200 && !($1 == 404 && $3 ~ /\/ServiceProviderConfig$/) { bad = 1 } { t += $2 }
             END { if (bad) exit 1; printf "time_ms=%.1f cpu_ms=%.0f\n", t * 1000, cpu }' "$T/curl.w"
}

# cpu_ns PID: the CPU time of all threads of PID so far
cpu_ns() {
        cat /proc/"$1"/task/*/schedstat | awk '{ n += $1 } END { printf "%.0f\n", n }'
}

bench_nsscache_size() {
        local n=$1 log="$T/scim-$1.log" out ref goal_t="" goal_m="" label
        start_scim "$n" --log "$log"
        : > "$T/nss.out"
        for i in 1 2 3; do
                : > "$log"
                run_bench_nsscache "$PORT" >> "$T/nss.out"
        done
        cp "$log" "$log.refresh" # the fixture logs curl's requests too
        : > "$T/curl.out"
        for i in 1 2 3; do
                curl_replay "$log.refresh" "$PORT" >> "$T/curl.out" || die "curl replay failed"
        done
        out=$(median3 "$T/nss.out" wall_ms)
        ref=$(median3 "$T/curl.out" time_ms)
        [ "$(val passwd "$out")" = "$n" ] || die "expected $n users: $out"
        label=$((n / 1000))k
        [ "$n" = 100000 ] && goal_t="<= 0.9 s" && goal_m="<= 60 MB"
        row "nsscache $label users: wall / CPU" "$(secs "$(val wall_ms "$out")") / $(secs "$(val cpu_ms "$out")")" \
            "$(secs "$(val time_ms "$ref")") (curl, same requests)" "$goal_t"
        row "nsscache $label users: peak RSS, requests" "$(mb "$(val peak_rss_kb "$out")"), $(val requests "$out")" \
            "$(mb "$(val base_rss_kb "$out")") (RSS before the run)" "$goal_m"
        if [ "$n" = "$DAEMON_USERS" ]; then
                bench_jsonc "$log.refresh" "$PORT" "$(val time_ms "$ref")"
                bench_nsscache_daemon "$PORT" "$(val time_ms "$ref")" "$(val cpu_ms "$ref")"
        fi
        stop "$SCIM"
}

# bench_jsonc LOG PORT CURL_MS: the CPU time json-c alone takes to parse the
# pages of the requests in LOG (saved by curl first), next to curl fetching
# them: the share of the run no mapping or writing can win back.
bench_jsonc() {
        local out
        rm -rf "$T/pages"
        mkdir "$T/pages"
        curl_config "$1" "$2" "$T/pages" > "$T/pages.cfg"
        curl -s -f -K "$T/pages.cfg" -H "Authorization: Bearer $TOKEN" || die "curl could not save the pages"
        : > "$T/jsonc.out"
        for i in 1 2 3; do
                "$TOOLS/bench-jsonc" "$T"/pages/*.json >> "$T/jsonc.out" || die "bench-jsonc failed"
        done
        out=$(median3 "$T/jsonc.out" parse_ms)
        rm -rf "$T/pages"
        row "json-c alone, the same $((DAEMON_USERS / 1000))k pages (CPU)" "$(secs "$(val parse_ms "$out")")" \
            "$(secs "$3") (curl, same requests), $(ratio "$(val parse_ms "$out")" "$3")x" ""
}

# refresh_ms: how long the last nsscache.refresh of $SOCK's sunkd took
refresh_ms() {
        "$SUNKCTL" -s "$SOCK" --json jobs | python3 -c '
import json, sys
print(*(j["last_duration_usec"] // 1000 for j in json.load(sys.stdin)["jobs"] if j["name"] == "nsscache.refresh"))'
}

hwm_kb() {
        awk '/^VmHWM:/ { print $2 }' /proc/"$1"/status
}

# nd_status FIELD: a field of the nsscache status of $SOCK's sunkd
nd_status() {
        "$SUNKCTL" -s "$SOCK" --json status | python3 -c '
import json, sys
s = [m for m in json.load(sys.stdin)["modules"] if m["name"] == "nsscache"][0]["status"]
v = s[sys.argv[1]]
print(str(v).lower() if isinstance(v, bool) else v)' "$1"
}

# bench_nsscache_daemon PORT CURL_MS CURL_CPU_MS: the module refreshing inside sunkd from
# the fixture on PORT: a first run that writes every map; three where
# nothing changed, forced (force-next-run), so each maps every page; one
# more that maps and leaves the memo of an unchanged run; three that find
# every answer and file as it left them and replay its requests.  The
# peak RSS of each (VmHWM, reset before it) and the RSS after it, next to
# the RSS of the idle daemon before the first; and the daemon's CPU time
# during each replay (all its threads), next to curl's.
bench_nsscache_daemon() {
        local port=$1 curl_ms=$2 curl_cpu=$3 d="$T/nd" idle first first_peak first_after peak=0 after=0
        local mapped replayed k cpu
        mkdir -p "$d/cache" "$d/ts"
        start_sunkd nd "modules:
  nsscache:
    nsscache_conf: $S/etc/nsscache.conf.example
    scim_base_url: http://127.0.0.1:$port/scim/v2
    files_dir: $d/cache
    timestamp_dir: $d/ts
    token_file: $T/token
    interval: 1h
    splay: 1h"
        idle=$(rss_kb "$PID")
        echo 5 > /proc/"$PID"/clear_refs || die "cannot reset the peak RSS of sunkd"
        "$SUNKCTL" -s "$SOCK" run nsscache.refresh > /dev/null || die "the refresh in sunkd failed"
        first=$(refresh_ms)
        first_peak=$(hwm_kb "$PID")
        first_after=$(rss_kb "$PID")
        : > "$T/nd-mapped.out"
        : > "$T/nd-replayed.out"
        for run in force force force map replay replay replay; do
                [ "$run" = force ] && touch "$d/state/nsscache/force-next-run"
                echo 5 > /proc/"$PID"/clear_refs
                cpu=$(cpu_ns "$PID")
                "$SUNKCTL" -s "$SOCK" run nsscache.refresh > /dev/null || die "the refresh in sunkd failed"
                cpu=$((($(cpu_ns "$PID") - cpu) / 1000000))
                case "$run:$(nd_status replayed)" in
                force:false) echo "ms=$(refresh_ms)" >> "$T/nd-mapped.out" ;;
                replay:true) echo "ms=$(refresh_ms) cpu_ms=$cpu" >> "$T/nd-replayed.out" ;;
                map:false) ;;
                *) die "nsscache in sunkd: a $run run came out replayed=$(nd_status replayed)" ;;
                esac
                k=$(hwm_kb "$PID")
                [ "$k" -gt "$peak" ] && peak=$k
                k=$(rss_kb "$PID")
                [ "$k" -gt "$after" ] && after=$k
        done
        [ "$first_after" -gt "$after" ] && after=$first_after
        mapped=$(val ms "$(median3 "$T/nd-mapped.out" ms)")
        replayed=$(median3 "$T/nd-replayed.out" ms)
        stop "$PID"
        # Retired goal: a mapped run parses every page with json-c, which alone
        # costs about 2x curl's fetch on loopback (tests/bench/README.md).
        row "sunkd $((DAEMON_USERS / 1000))k: first / unchanged, mapped" "$(secs "$first") / $(secs "$mapped")" \
            "$(secs "$curl_ms") (curl, same requests), $(ratio "$first" "$curl_ms")x / $(ratio "$mapped" "$curl_ms")x" \
            "retired: <= 1.25x curl"
        row "sunkd $((DAEMON_USERS / 1000))k: unchanged, replayed: wall / CPU" \
            "$(secs "$(val ms "$replayed")") / $(secs "$(val cpu_ms "$replayed")")" \
            "$(secs "$curl_ms") / $(secs "$curl_cpu") (curl, same requests), $(ratio "$(val ms "$replayed")" "$curl_ms")x / $(ratio "$(val cpu_ms "$replayed")" "$curl_cpu")x" \
            "<= 1.0x curl"
        row "sunkd $((DAEMON_USERS / 1000))k: peak RSS first / unchanged" \
            "$(mb "$first_peak") / $(mb "$peak")" "$(mb "$idle") (idle, before)" "<= 30 MB"
        row "sunkd $((DAEMON_USERS / 1000))k: RSS growth after a run (max)" "$(mb $((after - idle)))" \
            "$(mb "$after") after, $(mb "$idle") idle before" "<= 2 MB"
}

# bench_nsscache_latency N: bench-nsscache and curl, once each, against a
# fixture that takes PAGE_LATENCY_MS over every page of N users, as a
# directory server does: how much of the module's own time the server's hides.
bench_nsscache_latency() {
        local n=$1 log="$T/scim-latency.log" out ref
        start_scim "$n" --log "$log" --page-latency "$PAGE_LATENCY_MS"
        out=$(run_bench_nsscache "$PORT")
        [ "$(val passwd "$out")" = "$n" ] || die "expected $n users: $out"
        cp "$log" "$log.refresh"
        ref=$(curl_replay "$log.refresh" "$PORT") || die "curl replay failed"
        row "nsscache $((n / 1000))k, server ${PAGE_LATENCY_MS} ms/page" "$(secs "$(val wall_ms "$out")")" \
            "$(secs "$(val time_ms "$ref")") (curl, same requests), $(ratio "$(val wall_ms "$out")" "$(val time_ms "$ref")")x" \
            "<= 1.25x curl"
        stop "$SCIM"
}

bench_nsscache() {
        for n in $SIZES; do
                bench_nsscache_size "$n"
        done
        case " $SIZES " in
        *" $DAEMON_USERS "*) bench_nsscache_latency "$DAEMON_USERS" ;;
        esac
}

# loads: how often the authkeys map was built (runs of authkeys.load)
loads() {
        "$SUNKCTL" -s "$SOCK" --json jobs | python3 -c '
import json, sys
print(sum(j.get("runs", 0) for j in json.load(sys.stdin)["jobs"] if j["name"] == "authkeys.load"))'
}

bench_authkeys() {
        local d="$T/ak" map exec q ping idle busy n0 n1 user toucher ak="$B/modules/authkeys/sunkd-authkeys"
        if [ "$(id -u)" != 0 ]; then
                row "authkeys" "n/a (needs root)" "" ""
                return
        fi
        mkdir -p "$d"
        "$TOOLS/bench-authkeys-map" -o "$d/sshkey.cache" "$AK_USERS" || die "cannot write the sshkey cache"
        chmod 644 "$d/sshkey.cache"
        map=$("$TOOLS/bench-authkeys-map" "$AK_USERS" 5) || die "bench-authkeys-map failed"
        row "authkeys: map build, $AK_USERS users x 2 keys" "$(val build_ms "$map") ms" \
            "$(val file_mb "$map") MB file" "<= 150 ms"
        row "authkeys: the map's heap" "$(val map_mb "$map") MB" "" "<= 30 MB"

        start_sunkd authkeys "modules:
  authkeys:
    sshkey_cache: $d/sshkey.cache"
        user=user$((AK_USERS / 2))
        for _ in $(seq 600); do
                [ -n "$("$ak" -s "$SOCK" --no-fallback "$user" 2>/dev/null)" ] && break
                sleep 0.1
        done
        [ -n "$("$ak" -s "$SOCK" --no-fallback "$user")" ] || die "the authkeys module did not load the map"
        row "authkeys: sunkd RSS, map loaded" "$(mb "$(rss_kb "$PID")")" "" ""

        # As sshd runs it (--uid %U): no uid to look up.
        exec=$("$TOOLS/bench-exec" -n "$AK_RUNS" -- "$ak" -s "$SOCK" --no-fallback --uid 150000 "$user" -- /bin/true \
                -- "$(command -v grep)" -m1 "^$user:" "$d/sshkey.cache") || die "bench-exec failed"
        [ "$(sed -n 1p <<< "$exec" | sed -n 's/.*failures=\([0-9]*\).*/\1/p')" = 0 ] || die "sunkd-authkeys failed: $exec"
        row "authkeys: sunkd-authkeys p50 / p99" \
            "$(val p50_us "$(sed -n 1p <<< "$exec")") / $(val p99_us "$(sed -n 1p <<< "$exec")") us" \
            "$(val p50_us "$(sed -n 2p <<< "$exec")") / $(val p99_us "$(sed -n 2p <<< "$exec")") us (/bin/true), p50 $(ratio "$(val p50_us "$(sed -n 1p <<< "$exec")")" "$(val p50_us "$(sed -n 2p <<< "$exec")")")x" \
            "<= 1.5x /bin/true"
        row "authkeys: grep -m1 over the cache p50 / p99" \
            "$(val p50_us "$(sed -n 3p <<< "$exec")") / $(val p99_us "$(sed -n 3p <<< "$exec")") us" \
            "a key command that scans the file" ""

        q=$("$TOOLS/bench-ping" -t 2 -d "$PING_SECONDS" -m io.sunkd.AuthorizedKeys.Get -P "{\"user\":\"$user\"}" \
                "$SOCK") || die "bench-ping failed"
        [ "$(val errors "$q")" = 0 ] || die "Get errors: $q"
        ping=$("$TOOLS/bench-ping" -t 2 -d "$PING_SECONDS" "$SOCK") || die "bench-ping failed"
        row "authkeys: Get, new connection each, 2 clients" "$(val qps "$q")/s" \
            "$(val qps "$ping")/s (Ping, same daemon)" ">= 20000/s"

        idle=$("$TOOLS/bench-ping" -t 1 -d 2 -m io.sunkd.AuthorizedKeys.Get -P "{\"user\":\"$user\"}" "$SOCK") ||
                die "bench-ping failed"
        n0=$(loads)
        ( while :; do touch "$d/sshkey.cache"; sleep 0.2; done ) &
        toucher=$!
        PIDS+=("$toucher")
        busy=$("$TOOLS/bench-ping" -t 1 -d 3 -m io.sunkd.AuthorizedKeys.Get -P "{\"user\":\"$user\"}" "$SOCK") ||
                die "bench-ping failed"
        stop "$toucher"
        n1=$(loads)
        [ "$(val errors "$busy")" = 0 ] || die "Get errors during reloads: $busy"
        row "authkeys: Get p99 during map rebuilds" \
            "$(awk -v u="$(val p99_us "$busy")" 'BEGIN { printf "%.2f ms", u / 1000 }'), $((n1 - n0)) rebuilds" \
            "$(awk -v u="$(val p99_us "$idle")" 'BEGIN { printf "%.2f ms", u / 1000 }') (no rebuild)" "<= 5 ms"
        stop "$PID"
        bench_authkeys_refresh
}

# Get p99 while the nsscache module of the same sunkd refreshes 100k users
# (and authkeys then reloads what it wrote), again and again.
bench_authkeys_refresh() {
        local port scim idle busy user r0 r1 looper t0 secs
        start_scim "$AK_USERS"
        port=$PORT scim=$SCIM
        mkdir -p "$T/akr-cache" "$T/akr-ts"
        start_sunkd akr "modules:
  nsscache:
    nsscache_conf: $S/etc/nsscache.conf.example
    scim_base_url: http://127.0.0.1:$port/scim/v2
    files_dir: $T/akr-cache
    timestamp_dir: $T/akr-ts
    token_file: $T/token
    interval: 1h
    splay: 0s
  authkeys: {}"
        t0=$(date +%s.%N)
        "$SUNKCTL" -s "$SOCK" run nsscache.refresh > /dev/null || die "the first refresh failed"
        # Long enough for two refreshes, however slow the machine is today.
        secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { d = 2.5 * (b - a); printf "%.1f", d < 4 ? 4 : d }')
        for _ in $(seq 600); do [ "$(loads)" -ge 1 ] && break; sleep 0.1; done
        user=$(head -1 "$T/akr-cache/sshkey.cache" | cut -d: -f1)
        idle=$("$TOOLS/bench-ping" -t 1 -d 2 -m io.sunkd.AuthorizedKeys.Get -P "{\"user\":\"$user\"}" "$SOCK") ||
                die "bench-ping failed"
        r0=$(refreshes)
        # Ended by a file, not a signal: its last refresh finishes before sunkd stops.
        rm -f "$T/akr-stop"
        # Forced, so that each maps every page rather than replaying the last run.
        ( while [ ! -e "$T/akr-stop" ]; do
                touch "$T/akr/state/nsscache/force-next-run"
                "$SUNKCTL" -s "$SOCK" run nsscache.refresh > /dev/null
          done ) &
        looper=$!
        PIDS+=("$looper")
        busy=$("$TOOLS/bench-ping" -t 1 -d "$secs" -m io.sunkd.AuthorizedKeys.Get -P "{\"user\":\"$user\"}" "$SOCK") ||
                die "bench-ping failed"
        touch "$T/akr-stop"
        wait "$looper"
        stop "$looper"
        r1=$(refreshes)
        [ "$(val errors "$busy")" = 0 ] || die "Get errors during refreshes: $busy"
        row "authkeys: Get p99 during mapped ${AK_USERS}-user refreshes" \
            "$(awk -v u="$(val p99_us "$busy")" 'BEGIN { printf "%.2f ms", u / 1000 }'), $((r1 - r0)) refreshes" \
            "$(awk -v u="$(val p99_us "$idle")" 'BEGIN { printf "%.2f ms", u / 1000 }') (no refresh)" "<= 5 ms"
        stop "$PID"
        stop "$scim"
}

refreshes() {
        "$SUNKCTL" -s "$SOCK" --json jobs | python3 -c '
import json, sys
print(sum(j.get("runs", 0) for j in json.load(sys.stdin)["jobs"] if j["name"] == "nsscache.refresh"))'
}

bench_gres() {
        local out
        out=$(FAKE_NVML_CONFIG="$S/tests/data/gres/nvml-h100-8.desc" "$TOOLS/bench-gres" \
                "$B/tests/fake-nvml/.libs/libnvidia-ml.so" "$S/tests/data/gres/proc-node") || die "bench-gres failed"
        row "gres: discovery through NVML, $(val nvml_gpus "$out") GPUs, p50" "$(val nvml_p50_us "$out") us" \
            "fake libnvidia-ml.so.1" ""
        row "gres: discovery through /proc, $(val proc_gpus "$out") GPUs, p50" "$(val proc_p50_us "$out") us" "" ""
}

# The ten checks of the health row, as the module and nhc-like.sh do them.
health_config() {
        printf '%s\n' "modules:
  testmod:
    interval: 1h
    ballast: $1
  health:
    transport: none
    interval: 1h
    checks:
      - {name: root-fs, type: mount, path: /}
      - {name: proc, type: mount, path: /proc, rw: false}
      - {name: root-space, type: disk_free, path: /, min_free_pct: 1}
      - {name: tmp-space, type: disk_free, path: /tmp, min_free_pct: 1}
      - {name: root-inodes, type: inodes_free, path: /, min_free_pct: 1}
      - {name: memory, type: memory, min_available: 1M}
      - {name: init, type: process, process: \"$(cat /proc/1/comm)\"}
      - {name: os, type: file, path: /etc/os-release, match: \"^ID=\"}
      - {name: load, type: load, max_per_core: \"1000\"}
      - {name: ib, type: ib}"
}

# health_run NAME BALLAST: HEALTH_P50 (us) of sunkctl health run's call, and
# the daemon's HEALTH_RSS_MB.
health_run() {
        local out
        start_sunkd "$1" "$(health_config "$2")"
        out=$("$TOOLS/bench-ping" -t 1 -d "$HEALTH_SECONDS" -m io.sunkd.Health.Run "$SOCK") ||
                die "io.sunkd.Health.Run failed: $(tail -3 "$T/$1/sunkd.log")"
        [ "$(val errors "$out")" = 0 ] || die "io.sunkd.Health.Run answered errors: $out"
        HEALTH_RSS_MB=$(mb "$(rss_kb "$PID")")
        stop "$PID"
        HEALTH_P50=$(val p50_us "$out")
}

bench_health() {
        local ref small small_mb
        ref=$("$TOOLS/bench-exec" -n 200 -- /bin/bash "$S/tests/bench/nhc-like.sh") || die "nhc-like.sh failed"
        [ "$(val failures "$ref")" = 0 ] || die "nhc-like.sh failed a check: $ref"
        ref="$(ms "$(val p50_us "$ref")") (NHC-style shell, same checks: a lower bound of NHC)"
        health_run health-small 0
        small=$HEALTH_P50 small_mb=$HEALTH_RSS_MB
        row "health: 10 built-in checks, $HEALTH_RSS_MB daemon" "$(ms "$HEALTH_P50")" "$ref" "<= 5 ms"
        health_run health-big 100M
        row "health: 10 built-in checks, $HEALTH_RSS_MB daemon" "$(ms "$HEALTH_P50")" "$ref" "<= 5 ms"
        row "health: 10 built-in checks, $HEALTH_RSS_MB daemon against $small_mb" "$(ms "$HEALTH_P50")" \
            "$(ms "$small") ($small_mb daemon), $(ratio "$HEALTH_P50" "$small")x" "<= 1.25x small daemon"
}

# ms_since NS: milliseconds from the date +%s%N NS until now
ms_since() {
        echo $(( ($(date +%s%N) - $1) / 1000000 ))
}

# median N...: the middle one of the numbers
median() {
        printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# until_reason NODE WANT: poll sinfo -R every 10 ms until the node's reason
# is (WANT non-empty) or is not (empty) there; at most a minute
until_reason() {
        local i
        for i in $(seq 6000); do
                if [ -n "$2" ]; then sinfo -h -R -n "$1" -o %E | grep -q . && return 0
                else sinfo -h -R -n "$1" -o %E | grep -q . || return 0
                fi
                sleep 0.01
        done
        return 1
}

# In a subshell of its own (slurm.sh's S is the Slurm directory, and its
# daemons go with the subshell): prints "xid_ms=N ref_ms=N".
xid_measure() {
        local node=bench-gpu-1 nvml="$B/tests/fake-nvml/.libs/libnvidia-ml.so" kmsg="$T/kmsg" src="$S" i t xid=() ref=()
        bail_out() { die "$*"; }
        . "$src/tests/lib/slurm.sh"
        slurm_setup
        trap 'kill "$PID" 2>/dev/null; slurm_cleanup > /dev/null 2>&1' EXIT
        slurm_munge_start
        slurm_conf
        slurm_ctld_start
        slurm_node_start "$node" > /dev/null
        mkfifo "$kmsg" && exec 7<>"$kmsg" || die "cannot make the kernel log's stand-in"
        printf '%s\n' "init ok" "gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-" \
                "gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-" > "$T/nvml.desc"
        : > "$T/gres-slurm.conf"
        FAKE_NVML_CONFIG="$T/nvml.desc" start_sunkd xid "modules:
  gres:
    nvml_library: $nvml
    slurm_conf: $T/gres-slurm.conf
    gres_conf: $T/gres.conf
    node_name: $node
    interval: 1h
    kmsg: $kmsg
  health:
    node_name: $node
    interval: 1s
    fail_after: 1
    slurm_conf: $SLURM_CONF
    xid_policy:
      overrides:
        - {xid: 79, count: 1, window: 2s, action: drain}
    checks:
      - {name: gpu, type: gpu}" 7>&-
        wait_until 600 eval '"$SUNKCTL" -s "$SOCK" --json health | grep -q "\"gpu-ok\""' || die "the gpu check never passed"
        for i in $(seq "$XID_RUNS"); do
                t=$(date +%s%N)
                python3 "$src/tests/lib/kmsg-stand-in.py" "$kmsg" record $((1000 + i)) \
                        "NVRM: Xid (PCI:0000:0b:00): 79, pid=0, name=, GPU has fallen off the bus." || die "cannot write to the stand-in"
                until_reason "$node" yes || die "the XID never drained the node"
                xid+=("$(ms_since "$t")")
                until_reason "$node" "" || die "the node was never resumed"
                slurm_wait_ready "$node"
        done
        stop "$PID"
        for i in $(seq "$XID_RUNS"); do
                t=$(date +%s%N)
                scontrol update nodename="$node" state=drain reason="bench" || die "scontrol update failed"
                until_reason "$node" yes || die "scontrol's drain never showed"
                ref+=("$(ms_since "$t")")
                scontrol update nodename="$node" state=resume
                until_reason "$node" "" || die "the node was never resumed"
                slurm_wait_ready "$node"
        done
        exec 7>&-
        echo "xid_ms=$(median "${xid[@]}") ref_ms=$(median "${ref[@]}")"
}

bench_xid() {
        local out
        [ "$(id -u)" = 0 ] || die "the XID row needs root (slurmd)"
        out=$(xid_measure) || die "the XID row failed"
        row "health: XID line in the kernel log until sinfo -R shows the drain, p50" \
            "$(val xid_ms "$out") ms" "$(val ref_ms "$out") ms (scontrol update until sinfo -R)" "<= 1000 ms"
}

# us_pair KEY "k=v ...": "P50 / P99 us" of KEY_p50_us and KEY_p99_us
# The prolog client against the least a runner does, in the same run.
bench_prolog() {
        local d="$T/prolog-scripts" out client ref
        mkdir -p "$d" "$d.epilog"
        chmod 755 "$d" "$d.epilog"
        for i in 1 2 3 4 5; do
                printf '#!/bin/sh\nexit 0\n' > "$d/1$i-trivial"
                chmod 755 "$d/1$i-trivial"
        done
        start_sunkd prolog "modules:
  prolog:
    prolog_dir: $d
    epilog_dir: $d.epilog"
        out=$("$TOOLS/bench-exec" -n "$PROLOG_RUNS" \
                -- "$B/modules/prolog/sunkd-prolog" -s "$SOCK" \
                -- "$TOOLS/bench-runparts" "$d") || die "bench-exec failed"
        stop "$PID"
        client=$(sed -n 1p <<< "$out")
        ref=$(sed -n 2p <<< "$out")
        [ "$(val failures "$client")" = 0 ] && [ "$(val failures "$ref")" = 0 ] ||
                die "a prolog run failed: $out"
        row "prolog: sunkd-prolog running 5 trivial scripts, overhead p50" \
            "$(ms "$(( $(val p50_us "$client") - $(val p50_us "$ref") ))")" \
            "$(ms "$(val p50_us "$client")") against $(ms "$(val p50_us "$ref")") (run-parts in C)" "<= 3 ms"
}

# fleet_wait GEN: until every node's status shows manifest_generation GEN
# (sunkctl asks each node still behind, a round about every 2 s); prints how
# many nodes are behind, and one's last error, if FLEET_WAIT seconds pass first
fleet_wait() {
        local gen=$1 k behind=() left t0=$SECONDS
        for k in $(seq 1 "$FLEET_NODES"); do
                behind+=("$k")
        done
        while :; do
                left=()
                for k in "${behind[@]}"; do
                        [ "$(fleet_status "$k" manifest_generation)" = "$gen" ] || left+=("$k")
                done
                behind=("${left[@]}")
                [ "${#behind[@]}" = 0 ] && return 0
                if [ $((SECONDS - t0)) -ge "$FLEET_WAIT" ]; then
                        echo "${#behind[@]} (node ${behind[0]}: $(fleet_status "${behind[0]}" last_error))"
                        return 1
                fi
                sleep 2
        done
}

# fleet_status K FIELD: a number or string of node K's nsscache status
fleet_status() {
        "$SUNKCTL" -s "$FLEET_DIR/n$1/io.sunkd" --json status 2> /dev/null |
                sed -n "s/.*\"$2\": *\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -n 1
}

# fleet_log FROM: the access log's lines after line FROM, per node:
# "node requests bytes manifests" (a request for the manifest is a run)
fleet_log() {
        tail -n +$(($1 + 1)) "$T/fleet/access.log" | awk '
        { split($2, p, "/"); n = p[2]; req[n]++; bytes[n] += $4; if ($2 ~ /\/manifest$/) man[n]++ }
        END { for (n in req) print n, req[n], bytes[n], man[n] + 0 }'
}

# fleet_sum FROM: "requests bytes manifests" over the lines after FROM
fleet_sum() {
        fleet_log "$1" | awk '{ r += $2; b += $3; m += $4 } END { print r + 0, b + 0, m + 0 }'
}

# median_max: the median and the highest of the numbers on stdin
median_max() {
        sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] + 0, v[NR] + 0 }'
}

kb() {
        awk -v b="$1" 'BEGIN { printf "%.1f KB", b / 1000 }'
}

# fleet_edit PYTHON: change the fixture's data (d; CW the extension's key), serve it
fleet_edit() {
        python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
CW = 'urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser'
$1
json.dump(d, open(sys.argv[1], 'w'))" "$T/fleet/data.json" || die "cannot edit the fleet's SCIM data"
        FLEET_RELOADS=$((FLEET_RELOADS + 1))
        kill -HUP "$SCIM"
        wait_until 600 grep -qx "RELOADED $FLEET_RELOADS" "$T/fleet/scim.log" || die "the SCIM fixture did not reload"
}

# fleet_change DESC PYTHON: the change made at the directory and exported by
# the producer; then until every node has it.  Sets CHG_SECONDS (from the
# export until the last node shows it), CHG_BYTES and CHG_REQS (per node: the
# median and the highest) over that time
fleet_change() {
        local t0 from behind gen
        fleet_edit "$2"
        from=$(wc -l < "$T/fleet/access.log")
        t0=$(date +%s%N)
        # the export is a job of its own, which a refresh that published triggers
        "$SUNKCTL" -s "$T/fleet-producer/io.sunkd" --timeout 600 run nsscache.refresh > /dev/null &&
                "$SUNKCTL" -s "$T/fleet-producer/io.sunkd" --timeout 600 run nsscache.export > /dev/null ||
                die "the fleet's producer failed to export $1"
        gen=$(cat "$T/fleet-producer/state/nsscache/export-generation")
        behind=$(fleet_wait "$gen") || die "$behind nodes of $FLEET_NODES still without $1 after $FLEET_WAIT s"
        CHG_SECONDS=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
        fleet_log "$from" > "$T/fleet/per-node"
        [ "$(wc -l < "$T/fleet/per-node")" = "$FLEET_NODES" ] || die "not every node asked for $1"
        CHG_BYTES=$(awk '{ print $3 }' "$T/fleet/per-node" | median_max)
        CHG_REQS=$(awk '{ print $2 }' "$T/fleet/per-node" | median_max)
}

# fleet_nginx ROOT: nginx from the distribution on 127.0.0.1 serving ROOT to
# each node under /nK/ (so the access log tells the nodes apart), gzip_static
# for the producer's .gz copies; logs the time, URI, status, bytes sent and
# request time of every request
fleet_nginx() {
        local d="$T/fleet/nginx" port
        command -v nginx > /dev/null || die "nginx (Debian package nginx-light) is needed: make deps"
        mkdir -p "$d/tmp"
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        {
                echo "daemon off;"
                echo "worker_processes 1;"
                [ "$(id -u)" = 0 ] && echo "user root root;"
                echo "pid $d/nginx.pid;"
                echo "error_log $d/error.log;"
                echo "events { worker_connections 4096; }"
                echo "http {"
                echo "  default_type text/plain;"
                for t in client_body proxy fastcgi uwsgi scgi; do
                        echo "  ${t}_temp_path $d/tmp/$t;"
                done
                echo "  log_format fleet '\$msec \$request_uri \$status \$bytes_sent \$request_time';"
                echo "  access_log $T/fleet/access.log fleet;"
                echo "  gzip_static on;"
                echo "  server {"
                echo "    listen 127.0.0.1:$port;"
                echo "    root $1;"
                echo "    location ~ ^/n[0-9]+/ { rewrite ^/n[0-9]+/(.*)\$ /\$1 break; }"
                echo "  }"
                echo "}"
        } > "$d/nginx.conf"
        nginx -p "$d" -c "$d/nginx.conf" 2> "$d/start.err" &
        FLEET_PIDS+=($!)
        PIDS+=($!)
        FLEET_URL="http://127.0.0.1:$port"
        wait_until 300 curl -s -f -o /dev/null "$FLEET_URL/n0/manifest" ||
                { cat "$d/start.err" "$d/error.log" >&2; die "nginx did not start"; }
        : > "$T/fleet/access.log"
}

# fleet_node K: node K, its own directories, following the manifest
fleet_node() {
        local d="$FLEET_DIR/n$1"
        mkdir -p "$d/state" "$d/cache" "$d/ts"
        {
                echo "socket: $d/io.sunkd"
                echo "state_dir: $d/state"
                echo "module_dir: $T/fleet/modules"
                echo "modules:"
                echo "  nsscache:"
                echo "    source: http"
                echo "    maps: [passwd, shadow, group, sshkey]"
                echo "    files_dir: $d/cache"
                echo "    timestamp_dir: $d/ts"
                echo "    files_cache_filename_suffix: cache"
                echo "    manifest_url: $FLEET_URL/n$1/manifest"
                echo "    manifest_public_key: $FLEET_PUB"
                echo "    interval: ${FLEET_INTERVAL}s"
                echo "    splay: ${FLEET_INTERVAL}s"
        } > "$d/sunkd.yaml"
        chmod 644 "$d/sunkd.yaml"
        "$SUNKD" -c "$d/sunkd.yaml" 2> "$d/sunkd.log" &
        FLEET_PIDS+=($!)
        FLEET_NODE_PIDS+=($!)
        PIDS+=($!)
}

# fleet_cpu_ns: the CPU time of every node so far
fleet_cpu_ns() {
        local p
        for p in "${FLEET_NODE_PIDS[@]}"; do
                cat /proc/"$p"/task/*/schedstat 2> /dev/null
        done | awk '{ n += $1 } END { printf "%.0f\n", n }'
}

# fleet_stop: the nodes, nginx, the producer and the fixture, and their files
fleet_stop() {
        local p
        for p in "${FLEET_PIDS[@]}"; do
                kill "$p" 2> /dev/null
        done
        for p in "${FLEET_PIDS[@]}"; do
                wait "$p" 2> /dev/null
        done
        stop "$SCIM"
        stop "$FLEET_PRODUCER"
        for p in "${FLEET_PIDS[@]}"; do
                stop "$p"
        done
        FLEET_PIDS=()
        FLEET_NODE_PIDS=()
        rm -rf "$T/fleet" "$T/fleet-producer" "$FLEET_DIR"
}

# A fleet of BENCH_FLEET_NODES (200) sunkds following one producer's signed
# export of BENCH_FLEET_USERS (100000) users through nginx, each refreshing
# every BENCH_FLEET_INTERVAL (30) s with as much splay: what the origin serves
# per node and run with nothing changed, after one user changed and after
# every user changed, and how long until every node has a change.
bench_fleet() {
        local d="$T/fleet" p="$T/fleet-producer" t0 first_s du from full_bytes
        local idle_req idle_bytes idle_man idle_cpu rps one_s one_bytes one_reqs all_s all_bytes all_reqs behind
        FLEET_NODES=${BENCH_FLEET_NODES:-200}
        FLEET_USERS=${BENCH_FLEET_USERS:-100000}
        FLEET_INTERVAL=${BENCH_FLEET_INTERVAL:-60}
        FLEET_WAIT=$((FLEET_INTERVAL * 4 + 120))
        # The nodes' maps and state in memory where it has room: 200 nodes on
        # one virtual disk wait on each other's writes, which nodes of their own do not.
        if [ "$(df -k --output=avail /dev/shm 2> /dev/null | tail -n 1)" -gt $((FLEET_NODES * 64 * 1024 + 2097152)) ] 2> /dev/null &&
           [ "$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)" -gt $((FLEET_NODES * 64 * 1024 + 2097152)) ]; then
                FLEET_DIR=$(mktemp -d /dev/shm/sunkd-bench-fleet.XXXXXX) || die "mktemp failed"
        else
                FLEET_DIR="$T/fleet/nodes"
        fi
        mkdir -p "$FLEET_DIR" && chmod 755 "$FLEET_DIR"
        # each sunkd watches files through inotify: the default of 128
        # instances per user is less than a fleet on one machine
        if [ "$(cat /proc/sys/fs/inotify/max_user_instances)" -lt $((FLEET_NODES * 4 + 128)) ]; then
                echo $((FLEET_NODES * 4 + 128)) > /proc/sys/fs/inotify/max_user_instances ||
                        die "cannot raise fs.inotify.max_user_instances for $FLEET_NODES sunkds"
        fi
        FLEET_RELOADS=0
        FLEET_PIDS=()
        FLEET_NODE_PIDS=()
        command -v openssl > /dev/null || die "openssl is needed for the fleet's signing key"
        mkdir -p "$d/modules" "$p/cache" "$p/ts" "$p/export"
        chmod 755 "$d" "$d/modules" "$p"
        cp "$B/modules/nsscache/.libs/nsscache.so" "$d/modules/" || die "the modules are not built"
        python3 -c '
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("scim_server", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
json.dump(m.generate(int(sys.argv[2])), open(sys.argv[3], "w"))' \
                "$S/tests/lib/scim-server.py" "$FLEET_USERS" "$d/data.json" || die "cannot generate the fleet's users"
        rm -f "$T/scim.port"
        python3 "$S/tests/lib/scim-server.py" --data "$d/data.json" --port-file "$T/scim.port" \
                --log "$d/scim.log" --token "$TOKEN" 2> "$T/scim.err" &
        SCIM=$!
        PIDS+=("$SCIM")
        wait_for_file "$T/scim.port" 600 || { cat "$T/scim.err" >&2; die "SCIM fixture did not start"; }
        (umask 077 && openssl genpkey -algorithm ed25519 -out "$d/signing.pem" 2> /dev/null) || die "openssl genpkey failed"
        FLEET_PUB=$(openssl pkey -in "$d/signing.pem" -pubout | sed -n 2p)
        start_sunkd fleet-producer "modules:
  nsscache:
    nsscache_conf: $S/etc/nsscache.conf.example
    scim_base_url: http://127.0.0.1:$(cat "$T/scim.port")/scim/v2
    files_dir: $p/cache
    timestamp_dir: $p/ts
    token_file: $T/token
    interval: 1h
    splay: 1h
    export_dir: $p/export
    export_signing_key: $d/signing.pem"
        FLEET_PRODUCER=$PID
        "$SUNKCTL" -s "$SOCK" --timeout 600 run nsscache.refresh > /dev/null || die "the fleet's producer failed"
        "$SUNKCTL" -s "$SOCK" --timeout 600 run nsscache.export > /dev/null || die "the fleet's producer failed to export"
        full_bytes=$(cat "$p"/export/*.gz | wc -c)
        fleet_nginx "$p/export"

        # The nodes start together; their first runs spread over the splay.
        t0=$(date +%s%N)
        for k in $(seq 1 "$FLEET_NODES"); do
                fleet_node "$k"
        done
        behind=$(fleet_wait 1) || die "$behind nodes of $FLEET_NODES without the first export after $FLEET_WAIT s"
        first_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
        du="$(du -sk "$FLEET_DIR" | cut -f1) $(df --output=fstype "$FLEET_DIR" | tail -n 1)"

        # (a) Nothing changed: after an interval in which each node's first
        # unchanged run maps the files once more (that run is what shows them
        # unchanged), an interval of runs that fetch and map nothing.
        sleep "$FLEET_INTERVAL"
        from=$(wc -l < "$d/access.log")
        idle_cpu=$(fleet_cpu_ns)
        sleep "$FLEET_INTERVAL"
        idle_cpu=$(($(fleet_cpu_ns) - idle_cpu))
        read -r idle_req idle_bytes idle_man <<< "$(fleet_sum "$from")"
        [ "$idle_man" -gt 0 ] || die "no node ran in $FLEET_INTERVAL s"
        rps=$(awk -v r="$idle_req" -v m="$idle_man" 'BEGIN { printf "%.1f", 10000 * r / m / 900 }')

        # (b) One user's shell changed.
        fleet_change "one user changed" "d['Users'][len(d['Users']) // 2][CW]['sunkLoginShell'] = '/bin/zsh'"
        one_s=$CHG_SECONDS one_bytes=($CHG_BYTES) one_reqs=($CHG_REQS)

        # (c) Every user changed: every shell and every key.
        fleet_change "every user changed" "
for u in d['Users']:
    u[CW]['sunkLoginShell'] = '/bin/sh'
    u[CW]['sunkSshKeys'] = [k + '-rotated' for k in u[CW]['sunkSshKeys']]"
        all_s=$CHG_SECONDS all_bytes=($CHG_BYTES) all_reqs=($CHG_REQS)
        fleet_stop

        row "fleet 10k nodes, 15 min interval: origin requests" "${rps}/s" \
            "$FLEET_NODES nodes, ${FLEET_INTERVAL} s: $(ratio "$idle_req" "$idle_man") requests, $(awk -v b="$idle_bytes" -v m="$idle_man" 'BEGIN { printf "%.0f", b / m }') B a run" \
            "<= 12/s"
        row "fleet: a node's CPU for a run, nothing changed" "$(ms $((idle_cpu / idle_man / 1000)))" \
            "$idle_man runs of $FLEET_NODES nodes in ${FLEET_INTERVAL} s, $(awk -v c="$idle_cpu" -v s="$FLEET_INTERVAL" 'BEGIN { printf "%.2f", c / 1e9 / s }') cores" ""
        row "fleet: bytes per node, one user changed" "$(kb "${one_bytes[0]}") / $(kb "${one_bytes[1]}") max" \
            "${one_reqs[0]} requests (max ${one_reqs[1]}); the export gzipped $(kb "$full_bytes")" "<= 10 KB"
        row "fleet: bytes per node, every user changed" "$(kb "${all_bytes[0]}") / $(kb "${all_bytes[1]}") max" \
            "${all_reqs[0]} requests (max ${all_reqs[1]}); the export gzipped $(kb "$full_bytes")" ""
        row "fleet: until every node has it, one / every user" "${one_s} s / ${all_s} s" \
            "interval and splay ${FLEET_INTERVAL} s; the first export ${first_s} s" ""
        row "fleet: disk of a node's maps and state" "$(mb $((${du% *} / FLEET_NODES)))" \
            "$(mb "${du% *}") for $FLEET_NODES nodes, $((FLEET_USERS / 1000))k users, on ${du#* }" ""
}

us_pair() {
        echo "$(val "$1_p50_us" "$2") / $(val "$1_p99_us" "$2") us"
}

# sunkd's ldap source against Debian 13's packaged nsscache (run in the
# root make deps builds), one full run each from one slapd, the maps the
# same bytes (tests/bench/ldap-bench.sh).
bench_ldap() {
        local out n label ref
        n=$LDAP_USERS
        label="$((n / 1000))k"
        if [ "$(id -u)" != 0 ] || [ ! -x "$TRIXIE_ROOT/usr/bin/nsscache" ]; then
                row "ldap $label users: wall / CPU" "n/a (needs root and the Debian 13 root's nsscache: make deps)" "" ""
                return 0
        fi
        out=$(cd "$S" && SUNKD_BUILDDIR="$B" N="$n" NSSCACHE_ROOT="$TRIXIE_ROOT" bash tests/bench/ldap-bench.sh) ||
                die "ldap-bench.sh failed: $out"
        ref="nsscache $(chroot "$TRIXIE_ROOT" dpkg-query -W -f='${Version}' nsscache), same slapd"
        row "ldap $label users: wall / CPU" "$(val sunkd_wall_s "$out") s / $(val sunkd_cpu_s "$out") s" \
            "$(val nsscache_wall_s "$out") s / $(val nsscache_cpu_s "$out") s ($ref), $(ratio "$(val sunkd_wall_s "$out")" "$(val nsscache_wall_s "$out")")x / $(ratio "$(val sunkd_cpu_s "$out")" "$(val nsscache_cpu_s "$out")")x" \
            "<= 1.0x nsscache"
        row "ldap $label users: peak RSS" "$(mb "$(val sunkd_rss_kb "$out")")" \
            "$(mb "$(val nsscache_rss_kb "$out")") ($ref), $(ratio "$(val sunkd_rss_kb "$out")" "$(val nsscache_rss_kb "$out")")x" ""
}

# The SpawnSet against fork+exec from the same process, small and with 100 MB
# resident: fork's cost grows with the resident size, the SpawnSet's should not.
bench_spawn() {
        local small big
        small=$("$TOOLS/bench-spawn" -n "$SPAWN_RUNS") || die "bench-spawn failed"
        big=$("$TOOLS/bench-spawn" -n "$SPAWN_RUNS" -m 100) || die "bench-spawn -m 100 failed"
        row "spawn /bin/true p50 / p99, small RSS" "$(us_pair spawn "$small")" \
            "$(us_pair fork "$small") (fork+exec); $(mb "$(val rss_kb "$small")") RSS" ""
        row "spawn /bin/true p50 / p99, 100 MB heap" "$(us_pair spawn "$big")" \
            "$(us_pair fork "$big") (fork+exec); spawn p50 $(ratio "$(val spawn_p50_us "$big")" "$(val spawn_p50_us "$small")")x small RSS's" \
            "<= 1.25x small RSS"
}

[ -x "$SUNKD" ] && [ -x "$TOOLS/bench-ping" ] || die "build first (make)"
command -v python3 > /dev/null || die "python3 is needed for the SCIM fixture"
command -v curl > /dev/null || die "curl is needed for the reference"
bash "$S/tests/bench/verdict.t" > "$T/verdict.tap" || { cat "$T/verdict.tap" >&2; die "verdict.t failed"; }
printf '%s\n' "$TOKEN" > "$T/token"
chmod 600 "$T/token"
line "benchmark" "result" "reference (same run)" "goal" "met"
# BENCH_ONLY="ping authkeys": only those (idle ping busy nsscache authkeys health
# xid gres prolog spawn fleet ldap; busy measures the daemon ping started, so it needs ping before it).
for b in ${BENCH_ONLY:-idle ping busy nsscache authkeys health xid gres prolog spawn fleet ldap}; do
        declare -F "bench_$b" > /dev/null || die "no benchmark '$b'"
        "bench_$b"
done
echo
echo "Summary"
summary
