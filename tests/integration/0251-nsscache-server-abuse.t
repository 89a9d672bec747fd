#!/bin/bash
# nsscache SCIM source against a misbehaving SCIM server: the number of
# requests of one run is bounded by design, whatever the server claims.
set -u
TEST_NAME=0251
. "${SUNKD_SRCDIR:?}/tests/lib/scim-dump.sh"

# 1: the server ignores startIndex, leaves it out and claims 900000 results.
# Every answer is the same first page; the second one brings nothing new.
start_server storm --generate 25 --fault storm --claim-total 900000
dump --page-size 10
check "storm: the run ends, with what the first page held" [ "$RC" = 0 ]
check "storm: two requests for Users" [ "$(requests ' /scim/v2/Users?')" = 2 ]
check "storm: two requests for Groups" [ "$(requests ' /scim/v2/Groups?')" = 2 ]
check "storm: the repeat is noted" has_re "^note a page brought no resource not seen before"
check "storm: the repeated page is not mapped (no duplicate rejects)" has "count passwd=10 shadow=10 group=3 sshkey=10 rejects=0"

# 2: the same server claiming more than max_total_results: refused after one request.
start_server huge --generate 25 --fault storm --claim-total 1000000000
dump --page-size 10
check "huge totalResults: the run fails" has_re "^error E2BIG Users: the server reports totalResults=1000000000, more than max_total_results=1000000$"
check "huge totalResults: one listing request in all" [ "$(requests ' /scim/v2/[UG][a-z]*?')" = 1 ]
start_server huge2 --generate 25 --fault storm --claim-total 30
dump --page-size 10 --max-total-results 29
check "max_total_results is honoured" has_re "^error E2BIG Users: the server reports totalResults=30, more than max_total_results=29$"

# 3: pages that shrink to one resource after the first: new ids every time,
# so only the page budget (10 pages of 10 for totalResults=100, +10%, +2) stops it.
start_server dwindle --generate 100 --fault dwindle
dump --page-size 10
check "dwindle: the run fails at the page budget" has_re "^error E2BIG Users: more than 13 pages for totalResults=100$"
check "dwindle: 13 requests" [ "$(requests ' /scim/v2/Users?')" = 13 ]

# 4: totalResults larger than what the server then returns: noted, the run succeeds.
start_server overclaim --generate 25 --fault overclaim
dump --page-size 10
check "overclaim: succeeds" [ "$RC" = 0 ]
check "overclaim: all users" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "overclaim: noted once" [ "$(grep -c '^note the server sent fewer resources than its totalResults' "$T/out")" = 1 ]

# 5: Retry-After on 429 and 503, in seconds and as an HTTP-date, is waited
# for (the backoff alone would retry after 50 ms); one beyond the timeout fails at once.
elapsed_ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
start_server busy --generate 5 --fault busy --fault-count 1 --retry-after 2
t0=$(date +%s%N); dump; ms=$(elapsed_ms "$t0")
check "429 Retry-After: 2: succeeds after one retry" has_re "^stats requests=4 retries=1 "
check "429 Retry-After: 2: waited at least 2 s ($ms ms)" [ "$ms" -ge 2000 ]
start_server busydate --generate 5 --fault busy --busy-status 503 --fault-count 1 --retry-after date+3
t0=$(date +%s%N); dump; ms=$(elapsed_ms "$t0")
check "503 Retry-After: HTTP-date: succeeds after one retry" has_re "^stats requests=4 retries=1 "
check "503 Retry-After: HTTP-date 3 s ahead: waited at least 1 s ($ms ms)" [ "$ms" -ge 1000 ]
start_server busylong --generate 5 --fault busy --fault-count 1 --retry-after 3600
dump
check "Retry-After beyond the timeout: fails at once" \
        has_re "^error EPROTO Users page at startIndex=1: HTTP 429, the server asks to retry after 3600 s, longer than the timeout$"
check "Retry-After beyond the timeout: one listing request" [ "$(requests ' /scim/v2/[UG][a-z]*?')" = 1 ]

echo "1..$n"
exit $fail
