# The throw-away servers of the by-hand bench scripts (fleet.sh, fairness.sh, ab-small.sh,
# idle.sh, long-list.sh): a PostgreSQL cluster run as the `postgres` user (initdb refuses root) and an nginx,
# each in a folder of the script's work directory, and what their A/B scripts share. Sourced,
# not run; every server function takes the folder it works in, so a script may run several.
#
#   bench_pg_start DIR PORT SOCKET_DIR [-c name=value ...]   initdb into DIR/pg, start it on
#                                                               127.0.0.1:PORT (socket in SOCKET_DIR)
#   bench_pg_stop DIR [MODE]                                   stop it (pg_ctl -m MODE, default fast)
#   bench_nginx_start DIR SERVER_BLOCKS                        nginx with these `server { … }` lines
#   bench_nginx_stop DIR                                       stop it
#   bench_haul_binary PACKAGE_DIR                              print a release build's haul, building it
#   bench_ab_arguments NAME ARG...                             check an A/B script's ROUNDS BINARY...
#                                                               arguments (exit 2 saying what is wrong)
#   bench_random_files DIR COUNT BYTES                         COUNT random files f-000000… of BYTES
#                                                               each in DIR, made once (DIR/.complete)

bench_pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

bench_pg_start() {
    local dir=$1 port=$2 socket=$3
    shift 3
    mkdir -p "$dir/pg" "$socket"
    chmod 755 "$dir" && chown postgres: "$dir/pg" && chmod 700 "$dir/pg"
    [[ $socket == /tmp ]] || chown postgres: "$socket"
    runuser -u postgres -- "$bench_pgbin/initdb" -D "$dir/pg" -U postgres --auth=trust -E UTF8 --no-instructions >/dev/null
    runuser -u postgres -- "$bench_pgbin/pg_ctl" -D "$dir/pg" -l "$dir/pg/server.log" -w \
        -o "-p $port -k $socket -c listen_addresses=127.0.0.1 $*" start >/dev/null
}

bench_pg_stop() {
    local dir=$1 mode=${2:-fast}
    [[ -f $dir/pg/postmaster.pid ]] || return 0
    runuser -u postgres -- "$bench_pgbin/pg_ctl" -D "$dir/pg" -m "$mode" -w stop >/dev/null 2>&1 || true
}

bench_nginx_start() {
    local dir=$1 servers=$2
    mkdir -p "$dir/nginx/tmp"
    cat >"$dir/nginx/nginx.conf" <<CONF
user root; worker_processes 2; pid $dir/nginx/nginx.pid; error_log $dir/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000; default_type application/octet-stream;
  client_body_temp_path $dir/nginx/tmp/body; proxy_temp_path $dir/nginx/tmp/proxy; fastcgi_temp_path $dir/nginx/tmp/fastcgi;
  uwsgi_temp_path $dir/nginx/tmp/uwsgi; scgi_temp_path $dir/nginx/tmp/scgi;
  $servers
}
CONF
    nginx -c "$dir/nginx/nginx.conf"
}

bench_nginx_stop() {
    local dir=$1
    [[ -f $dir/nginx/nginx.pid ]] || return 0
    nginx -c "$dir/nginx/nginx.conf" -s stop 2>/dev/null || true
}

bench_haul_binary() {
    local package=$1
    swift build -c release --product haul --scratch-path /tmp/bench-build --package-path "$package" >/dev/null
    echo "$(swift build -c release --scratch-path /tmp/bench-build --package-path "$package" --show-bin-path)/haul"
}

bench_ab_arguments() {
    local name=$1
    shift
    if (($# < 2)) || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
        echo "usage: bench/$name.sh ROUNDS BINARY... (ROUNDS a whole number from 1; one or more haul binaries)" >&2
        exit 2
    fi
    shift
    local binary
    for binary in "$@"; do [[ -x $binary ]] || { echo "$name: $binary is not executable" >&2; exit 2; }; done
}

bench_random_files() {
    local dir=$1 count=$2 bytes=$3
    [[ -f $dir/.complete ]] && return 0
    rm -rf "$dir" && mkdir -p "$dir"
    head -c $((count * bytes)) /dev/urandom | split -a 6 -d -b "$bytes" - "$dir/f-"
    touch "$dir/.complete"
}
