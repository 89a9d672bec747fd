#!/bin/bash
# deadline: 600
# source = s3 maps an object record by record, as a SCIM run maps page by
# page: a passwd object of a million minimal records costs sunkd a small
# multiple of its bytes (the body, the map and the cache written), not the
# json-c tree of the whole object (about 50 times its bytes).  Measured as
# the growth of the daemon's peak RSS (VmHWM, reset before the run).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/s3rver.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
command -v curl >/dev/null || bail_out "curl is needed to put the object into the bucket"
trap 's3rver_stop; sunkd_cleanup' EXIT
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_REGION AWS_DEFAULT_REGION
N=1000000
# The most the peak may grow, in multiples of the object's size.
RATIO_MAX=4
mkdir -p "$T/cache" "$T/ts"

s3rver_start fleet
printf '[default]\naws_access_key_id = S3RVER\naws_secret_access_key = S3RVER\n' > "$T/aws-credentials"
chmod 600 "$T/aws-credentials"
python3 - "$T/passwd.json" "$N" <<'PY' || bail_out "cannot write the object"
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("[")
    f.write(",".join('{"Key":"u%d","Value":{"uid":%d,"gid":100000}}' % (i, 100000 + i) for i in range(n)))
    f.write("]")
PY
SIZE=$(stat -c %s "$T/passwd.json")
s3put maps/passwd.json "$T/passwd.json" || bail_out "cannot put the object into the bucket"

sunkd_config "modules:
  nsscache:
    source: s3
    maps: [passwd]
    files_dir: $T/cache
    timestamp_dir: $T/ts
    files_cache_filename_suffix: cache
    s3_bucket: fleet
    s3_passwd_object: maps/passwd.json
    s3_endpoint: $S3_URL
    s3_region: us-east-1
    s3_credentials_file: $T/aws-credentials
    http_retry_max: 1
    timeout: 5m
    interval: 1h
    splay: 1h"
# Under AddressSanitizer (make check-asan) freed blocks wait in its
# quarantine, which would count as held: none for this daemon.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
sunkd_start
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SUNKD_PID/status"; }
echo 5 > "/proc/$SUNKD_PID/clear_refs" || bail_out "cannot reset the peak RSS of sunkd"
BASE=$(kb VmHWM)
out=$(ctl run nsscache.refresh 2>&1); rc=$?
is "$rc" 0 "a refresh of $N records from the bucket succeeds"
[ "$rc" = 0 ] || { diag "$out"; sed 's/^/# /' "$T/sunkd.log"; }
PEAK=$(kb VmHWM)
is "$(wc -l < "$T/cache/passwd.cache")" "$N" "every record is in passwd.cache"
GROWTH=$(( (PEAK - BASE) * 1024 ))
diag "object $SIZE bytes; peak RSS $BASE kB before the run, $PEAK kB after: grown by $(( GROWTH * 10 / SIZE ))/10 times the object"
ok "the peak grew by at most $RATIO_MAX times the object" test "$GROWTH" -le $(( RATIO_MAX * SIZE ))
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
