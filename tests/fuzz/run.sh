#!/bin/sh
# Runs libFuzzer targets (make fuzz builds them) for RUNS executions each,
# one at a time, over a copy of each one's corpus, and prints a table of the
# executions libFuzzer counted (stat::number_of_executed_units).
#
# Usage: tests/fuzz/run.sh [-b BUILD-DIR] RUNS [TARGET...]
#   BUILD-DIR  the libFuzzer build (default build-fuzz)
#   TARGET     fuzz-gres-methods or gres-methods ...; default: every target built
# A target that crashes leaves its input under the work directory named in
# the table (crash-*), to be added to tests/fuzz/corpus/<name>/ as a
# regression; the exit status is then 1.
set -u
build=build-fuzz
if [ "${1:-}" = -b ]; then
        build=$2
        shift 2
fi
[ $# -ge 1 ] || { echo "usage: $0 [-b BUILD-DIR] RUNS [TARGET...]" >&2; exit 2; }
runs=$1
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd) || exit 2
if [ $# -eq 0 ]; then
        set -- $(cd "$build/tests/fuzz" && ls fuzz-* 2>/dev/null | grep -v '\.o$')
fi
[ $# -ge 1 ] || { echo "$0: no fuzz target in $build/tests/fuzz (make fuzz)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sunkd-fuzz.XXXXXX")
status=0
printf '%-24s %12s  %s\n' target executions result
for t in "$@"; do
        name=${t#fuzz-}
        bin=$build/tests/fuzz/fuzz-$name
        [ -x "$bin" ] || { printf '%-24s %12s  %s\n' "fuzz-$name" - "not built"; status=1; continue; }
        mkdir -p "$work/$name/corpus"
        cp "$src/tests/fuzz/corpus/$name/"* "$work/$name/corpus/" 2>/dev/null
        # -jobs=1: libFuzzer runs the target in a child and writes its output to fuzz-0.log
        (cd "$work/$name" && nice -n 10 "$bin" -runs="$runs" -jobs=1 -print_final_stats=1 \
                -artifact_prefix="$work/$name/" corpus >/dev/null 2>&1)
        rc=$?
        n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/fuzz-0.log" | tail -n 1)
        result=ok
        if [ $rc -ne 0 ] || ls "$work/$name"/crash-* "$work/$name"/leak-* "$work/$name"/timeout-* >/dev/null 2>&1; then
                result="FAILED (rc $rc): $work/$name"
                status=1
        fi
        printf '%-24s %12s  %s\n' "fuzz-$name" "${n:-?}" "$result"
done
[ $status -eq 0 ] && rm -rf "$work"
exit $status
