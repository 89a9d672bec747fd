#!/bin/bash
# nsscache SCIM source against the SCIM fixture server: the seed's
# nsscache.conf (base URL overridden), pagination with and without the
# server honouring count, and each fault mode's outcome.
set -u
TEST_NAME=0200
. "${SUNKD_SRCDIR:?}/tests/lib/scim-dump.sh"

# 1: the seed's configuration, count honoured.
start_server basic --generate 25
dump --page-size 10
check "seed nsscache.conf: fetch succeeds" [ "$RC" = 0 ]
check "all maps filled" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "passwd entry uses the CoreWeave attributes and the home override" \
        has "passwd user000003:x:100003:200000:User 3:/mnt/home/user000003:/bin/bash"
check "group entry from sunkPosixGroupName/members" \
        has "group group00002:x:200002:user000020,user000021,user000022,user000023,user000024"
check "sshkey entry" has_re "^sshkey user000007 ssh-ed25519 AAAA.* user000007@example$"
check "Users fetched once: 3 pages" [ "$(requests ' /scim/v2/Users?')" = 3 ]
check "Groups fetched once: 1 page" [ "$(requests ' /scim/v2/Groups?')" = 1 ]
check "count sent on every request" [ "$(grep -c 'count=10' "$LOG")" = 4 ]
check "users parameters URL-encoded" \
        [ "$(grep -c 'Users?attributes=urn%3Acoreweave%3Aparams%3Ascim%3Aschemas%3Aextension%3Acoreweave%3A2.0%3ACoreWeaveUser&startIndex=' "$LOG")" = 3 ]
check "groups parameters passed" [ "$(grep -c 'Groups?excludeInactiveUsers=true&startIndex=1&count=10' "$LOG")" = 1 ]
check "startIndex advances by Resources received" \
        [ "$(grep -o 'Users?[^ ]*' "$LOG" | grep -o 'startIndex=[0-9]*' | tr '\n' ' ')" = "startIndex=1 startIndex=11 startIndex=21 " ]
check "stats count requests (ServiceProviderConfig first)" \
        has "stats requests=5 retries=0 pages=4 resources=28 bytes=$(grep -o 'bytes=[0-9]*' "$T/out" | cut -d= -f2) paging=index"
check "ServiceProviderConfig asked once, first" [ "$(head -1 "$LOG")" = "GET /scim/v2/ServiceProviderConfig" ]

# 2: the server ignores count and pages by 7.
start_server ignore --generate 25 --ignore-count --page-size 7
dump --page-size 10
check "count ignored: fetch succeeds" [ "$RC" = 0 ]
check "count ignored: all users" has "count passwd=25 shadow=25 group=3 sshkey=25 rejects=0"
check "count ignored: 4 Users pages" [ "$(requests ' /scim/v2/Users?')" = 4 ]
check "count ignored: startIndex 1,8,15,22" \
        [ "$(grep -o 'Users?[^ ]*' "$LOG" | grep -o 'startIndex=[0-9]*' | tr '\n' ' ')" = "startIndex=1 startIndex=8 startIndex=15 startIndex=22 " ]

# 3: default page size, one page each.
start_server onepage --generate 25
dump
check "default count=100" [ "$(grep -c 'count=100' "$LOG")" = 2 ]

# 4: 5xx retried, then success.
start_server flaky --generate 5 --fault 500 --fault-count 2
dump
check "5xx twice: retried then success" [ "$RC" = 0 ]
check "5xx twice: stats" has_re "^stats requests=5 retries=2 "

# 5: 5xx beyond the retry budget.
start_server down --generate 5 --fault 500 --fault-count 100
dump -o scim_retry_max=3
check "5xx always: fails" [ "$RC" = 1 ]
check "5xx always: 1 + 3 retries" [ "$(requests 'GET /scim/v2/Users')" = 4 ]
check "5xx always: error names HTTP 500" has_re "^error EPROTO Users page at startIndex=1: HTTP 500$"

# 6: 401 is not retried.
start_server denied --generate 5 --fault 401
dump
check "401: fails" [ "$RC" = 1 ]
check "401: one request (the first, to ServiceProviderConfig)" [ "$(requests GET)" = 1 ]
check "401: clear message" has_re "^error EACCES .*authentication failed \(HTTP 401\): check the token$"
start_server wrongtoken --generate 5 --token right
TOKEN=wrong dump
check "wrong token: 401" has_re "^error EACCES "

# 7: a truncated page fails the run without a refetch.
start_server trunc --generate 25 --fault truncate --fault-page 2
dump --page-size 10
check "truncated page 2: fails" [ "$RC" = 1 ]
check "truncated page 2: no refetch" [ "$(requests 'GET /scim/v2/Users')" = 2 ]
check "truncated page 2: EBADMSG" has_re "^error EBADMSG Users page at startIndex=11: "
start_server garbage --generate 5 --fault garbage --fault-page 1
dump
check "garbage body: EBADMSG" has_re "^error EBADMSG Users page at startIndex=1: invalid JSON"
start_server empty --generate 5 --fault empty --fault-page 1
dump
check "empty body: EBADMSG" has_re "^error EBADMSG Users page at startIndex=1: truncated JSON"

# 8: slow server -> timeout (retried once, then fails).
start_server slow --generate 5 --fault slow --delay 3
start=$(date +%s%N)
dump --timeout-ms 400 -o scim_retry_max=1
el=$(( ($(date +%s%N) - start) / 1000000 ))
check "slow: ETIMEDOUT" has_re "^error ETIMEDOUT "
check "slow: two attempts" has_re "^stats requests=3 retries=1 "
check "slow: gave up within 2.5s ($el ms)" [ "$el" -lt 2500 ]

# 9: shrink: a smaller data set is fetched as is (shrink limits are applied by the caller).
start_server shrink --generate 50 --fault shrink --shrink 12
dump
check "shrink: 12 users" has_re "^count passwd=12 shadow=12 group=5 sshkey=12 "

# 10: refused connection.
start_server refused --fault refused
dump -o scim_retry_max=1
check "refused: ECONNREFUSED" has_re "^error ECONNREFUSED "
check "refused: retried once (after the ServiceProviderConfig attempt)" has_re "^stats requests=3 retries=1 "

# 11: hostile data set: rejects are counted and named.
cat >"$T/hostile.json" <<'JSON'
{"Users": [
 {"urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser":
   {"sunkPosixUsername": "alice", "sunkPosixUserId": 5000, "sunkSshKeys": ["ssh-ed25519 AAAA alice"]}},
 {"urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser":
   {"sunkPosixUsername": "root", "sunkPosixUserId": 0, "sunkSshKeys": ["ssh-ed25519 AAAA evil"]}},
 {"urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser":
   {"sunkPosixUsername": "mallory", "sunkPosixUserId": "5000"}},
 {"urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser":
   {"sunkPosixUsername": "eve:x", "sunkPosixUserId": 5001}},
 "not an object",
 {"urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser":
   {"sunkPosixUsername": "bob", "sunkPosixUserId": 5002, "sunkSshKeys": ["ssh-ed25519 AAAA bob"]}}
],
"Groups": [{"sunkPosixGroupName": "wheel2", "sunkPosixGroupId": 5000,
            "members": [{"sunkPosixUsername": "alice"}, {"sunkPosixUsername": "bad name"}]}]}
JSON
start_server hostile --data "$T/hostile.json"
dump
check "hostile: run succeeds with the valid entries" has "count passwd=1 shadow=1 group=1 sshkey=1 rejects=6"
check "hostile: uid 0 rejected" has "reject passwd id-out-of-range root 0"
check "hostile: duplicate uid rejected" has "reject passwd duplicate-id mallory 5000"
check "hostile: neither claimant of a contested uid is published" has "reject passwd duplicate-id alice 5000"
check "hostile: bad name rejected" has "reject passwd invalid-name eve:x -1"
check "hostile: non-object rejected" has "reject passwd not-an-object - -1"
check "hostile: bad member dropped" has "reject group invalid-member bad name -1"
check "hostile: no key for rejected root" bash -c "! grep -q evil '$T/out'"

# 12: token file permissions.
printf 'test-token\n' >"$T/token"
chmod 0644 "$T/token"
start_server tokfile --generate 3
dump --token-file "$T/token"
check "world-readable token file refused" has_re "^error EPERM token_file .*refused"
chmod 0600 "$T/token"
TOKEN=wrong dump --token-file "$T/token"
check "token_file wins over the environment" [ "$RC" = 0 ]

echo "1..$n"
exit $fail
