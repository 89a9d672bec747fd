# A real S3-compatible server on loopback: npm's s3rver (sourced after tap.sh and sunkd.sh).
#
# s3rver_start BUCKET   serve BUCKET from $T/s3 on a free port of 127.0.0.1; $S3_URL set
#                       (path-style: $S3_URL/BUCKET/KEY), its log in $S3_LOG.  s3rver knows
#                       one key pair, S3RVER/S3RVER; it refuses an unknown access key id
#                       (403 InvalidAccessKeyId) but does not check SigV4 signatures
#                       themselves (the unit test test-nsscache-s3 checks those).
# s3rver_stop           stop it and wait until it is gone
# s3put KEY FILE        PUT FILE as BUCKET/KEY, signed as the tests' client
# s3get KEY             the object's bytes on stdout; fails on anything but 200
#
# Installed by `make deps` (packaging/install-deps.sh) under /opt/sunkd-test;
# $S3RVER names another s3rver.js.
S3RVER=${S3RVER:-/opt/sunkd-test/node_modules/s3rver/bin/s3rver.js}
S3_EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

s3rver_listening() {
        S3_PORT=$(sed -n 's/.*S3rver listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$S3_LOG" | head -n 1)
        [ -n "$S3_PORT" ]
}

s3rver_start() {
        S3_BUCKET=$1
        command -v node >/dev/null || bail_out "node is needed for s3rver: make deps"
        [ -f "$S3RVER" ] || bail_out "s3rver is not installed at $S3RVER: make deps"
        mkdir -p "$T/s3"
        S3_LOG="$T/s3rver.log"
        : > "$S3_LOG"
        node "$S3RVER" -d "$T/s3" -a 127.0.0.1 -p 0 --no-vhost-buckets --configure-bucket "$S3_BUCKET" \
                >> "$S3_LOG" 2>&1 &
        S3RVER_PID=$!
        if ! wait_until 300 s3rver_listening; then
                sed 's/^/# /' "$S3_LOG"
                bail_out "s3rver did not start"
        fi
        S3_URL="http://127.0.0.1:$S3_PORT"
}

s3rver_stop() {
        [ -n "${S3RVER_PID:-}" ] || return 0
        kill -TERM "$S3RVER_PID" 2>/dev/null
        wait "$S3RVER_PID" 2>/dev/null
        S3RVER_PID=
}

s3put() {
        curl -sf -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER -X PUT \
                -H "x-amz-content-sha256: $(sha256sum < "$2" | cut -d' ' -f1)" \
                -H 'Content-Type: application/octet-stream' --data-binary "@$2" "$S3_URL/$S3_BUCKET/$1"
}

s3get() {
        curl -sf --aws-sigv4 aws:amz:us-east-1:s3 -u S3RVER:S3RVER -H "x-amz-content-sha256: $S3_EMPTY_SHA256" \
                "$S3_URL/$S3_BUCKET/$1"
}
