# A real nginx on loopback serving a directory (sourced after tap.sh and sunkd.sh).
#
# nginx_start ROOT [CERT KEY]  serve ROOT on a free port of 127.0.0.1 (https with CERT and KEY);
#                              $NGINX_URL, $NGINX_LOG (access log) set; its prefix, config, pid
#                              and logs are in $T/nginx; gzip on for every type
# nginx_stop                   stop it (fast shutdown) and wait until it is gone
# nginx_restart                start it again as it was, on the same port (bails out if taken)
# nginx_requests PATH          how many requests for PATH the access log holds
#
# Each access log line: METHOD URI STATUS [If-None-Match] [If-Modified-Since] [Content-Encoding].

nginx_start() {
        local root=$1 cert=${2:-} key=${3:-} port listen scheme=http try
        command -v nginx >/dev/null || bail_out "nginx (Debian package nginx-light) is needed: make deps"
        mkdir -p "$T/nginx/tmp" "$T/nginx/logs"
        NGINX_LOG="$T/nginx/access.log"
        : > "$NGINX_LOG"
        for try in 1 2 3 4 5; do
                port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
                listen="127.0.0.1:$port"
                if [ -n "$cert" ]; then
                        listen="$listen ssl"
                        scheme=https
                fi
                cat > "$T/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
user root root;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log info;
events { worker_connections 64; }
http {
        default_type text/plain;
        client_body_temp_path $T/nginx/tmp/body;
        proxy_temp_path $T/nginx/tmp/proxy;
        fastcgi_temp_path $T/nginx/tmp/fastcgi;
        uwsgi_temp_path $T/nginx/tmp/uwsgi;
        scgi_temp_path $T/nginx/tmp/scgi;
        log_format sunkd '\$request_method \$uri \$status [\$http_if_none_match] [\$http_if_modified_since] [\$sent_http_content_encoding]';
        access_log $NGINX_LOG sunkd;
        gzip on;
        gzip_types *;
        gzip_min_length 1;
        server {
                listen $listen;
                root $root;
                ${cert:+ssl_certificate $cert; ssl_certificate_key $key;}
        }
}
EOF
                nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" 2> "$T/nginx/start.err" &
                NGINX_PID=$!
                NGINX_URL="$scheme://127.0.0.1:$port"
                if wait_until 300 nginx_listening; then
                        return 0
                fi
                kill "$NGINX_PID" 2>/dev/null
                wait "$NGINX_PID" 2>/dev/null
                grep -q "Address already in use" "$T/nginx/error.log" "$T/nginx/start.err" 2>/dev/null || break
        done
        sed 's/^/# /' "$T/nginx/start.err" "$T/nginx/error.log" 2>/dev/null
        bail_out "nginx did not start"
}

nginx_listening() {
        kill -0 "$NGINX_PID" 2>/dev/null || return 1
        python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
                "${NGINX_URL##*:}" 2>/dev/null
}

nginx_stop() {
        [ -n "${NGINX_PID:-}" ] || return 0
        kill -TERM "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
        NGINX_PID=
}

nginx_restart() {
        nginx -p "$T/nginx" -c "$T/nginx/nginx.conf" 2> "$T/nginx/start.err" &
        NGINX_PID=$!
        wait_until 300 nginx_listening && return 0
        sed 's/^/# /' "$T/nginx/start.err" "$T/nginx/error.log" 2>/dev/null
        bail_out "nginx did not start again on ${NGINX_URL##*:}"
}

nginx_requests() {
        grep -c "^GET $1 " "$NGINX_LOG"
}
