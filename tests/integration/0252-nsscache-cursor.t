#!/bin/bash
# nsscache SCIM source and RFC 9865 cursor pagination: used where
# /ServiceProviderConfig advertises it or the server requires it, and held
# to the same bounds as index paging against a misbehaving server.
set -u
TEST_NAME=0252
. "${SUNKD_SRCDIR:?}/tests/lib/scim-dump.sh"

listing() { grep -E ' /scim/v2/(Users|Groups)' "$LOG"; }

# 1: advertised in /ServiceProviderConfig: every listing request is by cursor.
start_server advertised --generate 25 --pagination cursor
dump --page-size 10
check "advertised: the run succeeds" [ "$RC" = 0 ]
check "advertised: all entries" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "advertised: paged by cursor" has_re "^stats requests=5 retries=0 pages=4 resources=28 bytes=[0-9]+ paging=cursor$"
check "advertised: ServiceProviderConfig asked first" [ "$(head -1 "$LOG")" = "GET /scim/v2/ServiceProviderConfig" ]
check "advertised: the first request sends an empty cursor" [ "$(requests 'Users?[^ ]*cursor&count=10$')" = 1 ]
check "advertised: then each nextCursor" \
        [ "$(grep -o 'Users?[^ ]*' "$LOG" | grep -o 'cursor[=a-z0-9]*' | tr '\n' ' ')" = "cursor cursor=ka cursor=k14 " ]
check "advertised: no startIndex is sent" [ "$(listing | grep -c startIndex)" = 0 ]
check "advertised: Groups by cursor too" [ "$(requests 'Groups?excludeInactiveUsers=true&cursor&count=10')" = 1 ]

# 2: pagination: index never asks and never sends a cursor.
start_server advertised2 --generate 25 --pagination cursor
dump --page-size 10 --pagination index
check "index: the run succeeds" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "index: no ServiceProviderConfig request" [ "$(requests ServiceProviderConfig)" = 0 ]
check "index: no cursor" [ "$(listing | grep -c cursor)" = 0 ]
check "index: paged by index" has_re " paging=index$"

# 3: a server that requires cursors and does not say so: the first index
# request brings a nextCursor, which is followed.
start_server only --generate 25 --pagination cursor-only
dump --page-size 10
check "required: the run succeeds" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "required: noted" has "note the server answered an index request with a nextCursor: paged by cursor (RFC 9865)"
check "required: 3 Users requests" [ "$(requests ' /scim/v2/Users?')" = 3 ]
check "required: paged by cursor" has_re " paging=cursor$"
# ...also when it leaves totalResults out
start_server only3 --generate 25 --pagination cursor-only --fault cursor-nototal
dump --page-size 10
check "required, no totalResults: the run succeeds" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "required: once seen, the next listing starts by cursor" [ "$(requests " /scim/v2/Groups?excludeInactiveUsers=true&cursor&count=10")" = 1 ]
# forced to index, the same server serves its first page forever: the repeat stops it
start_server only2 --generate 25 --pagination cursor-only
dump --page-size 10 --pagination index
check "required, forced to index: stops at the repeated page" \
        has "note a page brought no resource not seen before (the server ignores startIndex?): stopped there"
check "required, forced to index: two Users requests" [ "$(requests ' /scim/v2/Users?')" = 2 ]

# 4: pagination: cursor against a server that does not do cursors: refused, not published short.
start_server nocursor --generate 25
dump --page-size 10 --pagination cursor
check "forced cursor on an index server: fails" \
        has_re "^error EPROTO Users: the server answered a cursor request without nextCursor after 10 of totalResults=25 \(it does not page by cursor: set pagination: index\)$"
check "forced cursor: no ServiceProviderConfig request" [ "$(requests ServiceProviderConfig)" = 0 ]

# 5: a nextCursor that names the first page again: the repeat stops the run.
start_server loop --generate 25 --pagination cursor --fault cursor-loop
dump --page-size 10
check "loop: the run ends" [ "$RC" = 0 ]
check "loop: noted" has "note a page brought no resource not seen before (the server ignores startIndex?): stopped there"
check "loop: two Users requests" [ "$(requests ' /scim/v2/Users?')" = 2 ]
check "loop: the repeated page is not mapped" has_re "^count passwd=10 shadow=10 .* rejects=0$"

# 6: a nextCursor that would add a parameter to the next request: refused.
start_server hostile --generate 25 --pagination cursor --fault cursor-hostile
dump --page-size 10
check "hostile cursor: fails" has_re "^error EBADMSG Users page 1 by cursor: nextCursor is not a string of at most 1024 URL-safe characters \(RFC 9865\)$"
check "hostile cursor: never sent" [ "$(listing | grep -c 'startIndex')" = 0 ]
check "hostile cursor: one Users request" [ "$(requests ' /scim/v2/Users?')" = 1 ]

# 7: expiredCursor (RFC 9865 2.1): the run fails with the server's reason.
start_server expired --generate 25 --pagination cursor --fault cursor-expired
dump --page-size 10
check "expired cursor: fails, naming the scimType" has_re "^error EPROTO Users page 2 by cursor: HTTP 400 \(expiredCursor\)$"
check "expired cursor: not retried" [ "$(requests ' /scim/v2/Users?')" = 2 ]

# 8: totalResults is optional by cursor.
start_server nototal --generate 25 --pagination cursor --fault cursor-nototal
dump --page-size 10
check "no totalResults: the run succeeds" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
# ...and then max_total_results bounds the run: 100 users, at most 30
start_server nototal2 --generate 100 --pagination cursor --fault cursor-nototal
dump --page-size 10 --max-total-results 30
check "no totalResults: max_total_results bounds the run" \
        has_re "^error E2BIG Users: more than max_total_results=30 resources$"
check "no totalResults: four Users requests" [ "$(requests ' /scim/v2/Users?')" = 4 ]

# 9: nextCursor beyond the first totalResults: the page budget stops it
# (20 results of 10 a page: 2 pages, +10%, +2).
start_server claim --generate 100 --pagination cursor --fault cursor-claim --claim-total 20
dump --page-size 10
check "cursor past totalResults: fails at the page budget" has_re "^error E2BIG Users: more than 4 pages for totalResults=20$"
check "cursor past totalResults: four Users requests" [ "$(requests ' /scim/v2/Users?')" = 4 ]
start_server claim2 --generate 100 --pagination cursor --fault cursor-claim --claim-total 2000000
dump --page-size 10
check "cursor, huge totalResults: refused after one request" \
        has_re "^error E2BIG Users: the server reports totalResults=2000000, more than max_total_results=1000000$"
check "cursor, huge totalResults: one Users request" [ "$(requests ' /scim/v2/Users?')" = 1 ]

# 10: a ServiceProviderConfig that does not parse: noted, paged by index.
start_server garbage --generate 25 --fault spc-garbage
dump --page-size 10
check "unreadable ServiceProviderConfig: the run succeeds" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "unreadable ServiceProviderConfig: noted" has "note /ServiceProviderConfig could not be read: paged by index"
check "unreadable ServiceProviderConfig: paged by index" has_re " paging=index$"

# 11: the setting itself.
dump --pagination sideways
check "pagination: a bad value is refused" has "config-error key 'pagination': must be auto, index or cursor"
dump -o 'scim_users_parameters=cursor=abc'
check "a cursor in the parameters is refused" has_re "^config-error .*must not set count, startIndex or cursor"

echo "1..$n"
exit $fail
