# verdict GOAL RESULT REFERENCE: whether a row of make bench meets its goal
# (sourced by bench.sh and verdict.t).
#
# GOAL is a bound, "OP NUMBER[UNIT] ..." with OP one of <= >= = (">= 20000/s",
# "<= 0.9 s", "= 0").  Every figure of RESULT written in the goal's unit must
# meet it, so that a row showing two runs ("22.5 MB / 26.6 MB") cannot hide
# the worse one; a figure in another unit (a count of requests) is not the
# goal's business.  A bound on a ratio ("<= 1.25x curl") holds the ratios
# ("1.09x") that REFERENCE shows, as the reader sees them.
#
# Prints "met" or "not met"; "retired" for a goal given up ("retired: ...");
# "not measured" where RESULT is "n/a ..."; nothing for no goal.  A goal that
# no figure answers, or one it cannot read, is an error (exit 2): the bench
# script has a bug, and no verdict is better than a wrong one.
verdict() {
        case $1 in
        "") return 0 ;;
        retired:*) echo retired; return 0 ;;
        esac
        awk -v goal="$1" -v res="$2" -v ref="$3" '
        # The number and unit at the start of s: "0.9 s" "20000/s" "1.25x" "0".
        function figure(s) {
                if (!match(s, /^[0-9]+(\.[0-9]+)?/))
                        return 0
                num = substr(s, 1, RLENGTH) + 0
                s = substr(s, RLENGTH + 1)
                sub(/^ /, "", s)
                match(s, /^[^ ,;()]*/)
                unit = substr(s, 1, RLENGTH)
                return 1
        }
        function meets(v) {
                return op == "<=" ? v <= bound : op == ">=" ? v >= bound : v == bound
        }
        BEGIN {
                op = ""
                if (match(goal, /^(<=|>=|=) */)) {
                        op = substr(goal, 1, RLENGTH)
                        sub(/ +$/, "", op)
                }
                if (op == "" || !figure(substr(goal, RLENGTH + 1))) {
                        print "bench: cannot read the goal \"" goal "\"" > "/dev/stderr"
                        exit 2
                }
                bound = num
                want = unit
                text = want == "x" ? ref : res
                found = 0
                bad = 0
                # Each number that starts a word: not the 50 of "p50".
                for (i = 1; i <= length(text); i++) {
                        if (i > 1 && substr(text, i - 1, 1) ~ /[A-Za-z0-9._]/)
                                continue
                        if (!figure(substr(text, i)) || unit != want)
                                continue
                        found++
                        if (!meets(num))
                                bad++
                }
                if (found)
                        print bad ? "not met" : "met"
                else if (res ~ /^n\/a/)
                        print "not measured"
                else {
                        print "bench: no figure in " (want == "x" ? "ratios" : "\"" want "\"") \
                              " for the goal \"" goal "\" in \"" text "\"" > "/dev/stderr"
                        exit 2
                }
        }'
}
