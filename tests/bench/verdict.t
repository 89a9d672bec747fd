#!/bin/bash
# make bench's verdicts: met / not met from the figures a row shows.
# deadline: 60
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/bench/verdict.sh"

# v GOAL RESULT REFERENCE WANT: verdict prints WANT and succeeds.
v() {
        local got
        got=$(verdict "$1" "$2" "$3" 2>&1)
        is "$?:$got" "0:$4" "'$1' on '$2' | '$3': $4"
}
# bad GOAL RESULT REFERENCE: verdict refuses (exit 2) and says why.
bad() {
        local got rc
        got=$(verdict "$1" "$2" "$3" 2>&1)
        rc=$?
        is "$rc" 2 "'$1' on '$2' | '$3' is refused"
        like "$got" "^bench: " "... with a message"
}

# Bounds on the result, in its unit.
v "<= 0.9 s" "0.809 s / 0.767 s" "0.183 s (curl, same requests)" "met"
v "<= 0.9 s" "0.970 s / 0.767 s" "0.183 s (curl, same requests)" "not met"
v "<= 0.9 s" "0.809 s / 0.950 s" "" "not met"
v "<= 0.9 s" "0.900 s" "" "met"
v "<= 5 ms" "0.11 ms" "0.11 ms (no job running)" "met"
v "<= 5 ms" "5.01 ms" "0.11 ms (no job running)" "not met"
v "<= 60 MB" "21.0 MB, 1101" "9.8 MB (RSS before the run)" "met"
v "<= 30 MB" "22.5 MB / 26.6 MB" "11.2 MB (idle, before)" "met"
v "<= 30 MB" "22.5 MB / 30.1 MB" "11.2 MB (idle, before)" "not met"
v ">= 20000/s" "28944/s" "29469/s (Ping, same daemon)" "met"
v ">= 20000/s" "19999/s" "29469/s (Ping, same daemon)" "not met"
v "= 0" "0" "0 (sunkd, no modules)" "met"
v "= 0" "3" "0 (sunkd, no modules)" "not met"
v "<= 5 ms" "0.18 ms, 13 rebuilds" "0.12 ms (no rebuild)" "met"
# A figure in another unit is not the goal's: seconds are not milliseconds.
v "<= 150 ms" "88.2 ms" "21.4 MB file" "met"
bad "<= 5 ms" "6 s" ""
# Ratio bounds hold the ratios of the reference, not the result's figures.
v ">= 0.8x echo" "25509/s" "32673/s (echo server), 0.78x" "not met"
v ">= 0.8x echo" "27000/s" "32673/s (echo server), 0.83x" "met"
v "<= 1.25x curl" "6.608 s" "6.061 s (curl, same requests), 1.09x" "met"
v "<= 1.0x curl" "0.215 s / 0.093 s" "0.183 s / 0.142 s (curl, same requests), 1.17x / 0.65x" "not met"
v "<= 1.0x curl" "0.170 s / 0.093 s" "0.183 s / 0.142 s (curl, same requests), 0.93x / 0.65x" "met"
bad "<= 1.25x curl" "1.10x" "6.061 s (curl, same requests)"
# The 50 of "p50" and the 8 of "x8" are not figures.
v "<= 1.5x /bin/true" "3770 / 5290 us" "2670 / 4120 us (/bin/true), p50 1.41x" "met"
v "<= 1.5x /bin/true" "4100 / 5290 us" "2670 / 4120 us (/bin/true), p50 1.54x" "not met"
bad "= 0" "p50" ""
# No goal, a retired one, nothing measured, a goal that cannot be read.
v "" "3.2 MB" "3.0 MB (sunkd, no modules)" ""
v "retired: <= 1.25x curl" "0.966 s / 0.970 s" "0.183 s (curl, same requests), 5.28x / 5.30x" "retired"
v "<= 5 ms" "n/a (needs root)" "" "not measured"
bad "fast" "1 s" ""
bad "<= fast" "1 s" ""
bad "as with small RSS" "2.21 / 3.55 ms" ""

done_testing
