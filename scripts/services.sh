#!/usr/bin/env bash
# Makes sure the PostgreSQL and Redis that the tests (and a `make run` pointed at them) use are answering.
#
#   scripts/services.sh POSTGRES_URL REDIS_URL
#
# For each URL on this machine's loopback (127.0.0.1 / localhost): if a server already answers there (and, for
# PostgreSQL, lets the URL's user in), it is used as it is. Otherwise the server is installed from Debian's
# packages when absent and started with a data folder of Fairway's own, outside the repository:
#   PostgreSQL: a cluster made by initdb (trust authentication on loopback only), owned by the `postgres` user
#               when run as root, in $FAIRWAY_SERVICES_DIR/postgresql-<major> (default /var/lib/postgresql/fairway
#               as root, ~/.cache/fairway/services otherwise);
#   Redis:      redis-server without persistence, daemonized, its log beside the PostgreSQL cluster.
# Nothing is started for a URL that points elsewhere: that server is the caller's. Idempotent; safe to run twice.
set -euo pipefail

[ $# = 2 ] || { echo "usage: services.sh POSTGRES_URL REDIS_URL (either may be empty: nothing to start)" >&2; exit 2; }
pg_url=$1
redis_url=$2

say() { echo "services: $*"; }
die() { echo "services: $*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
if is_root; then
  base=${FAIRWAY_SERVICES_DIR:-/var/lib/postgresql/fairway}
else
  base=${FAIRWAY_SERVICES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fairway/services}
fi

apt_updated=
apt_install() {
  # as root, or through sudo without a password (a CI runner's user): Debian's package, never a download
  local as=()
  if ! is_root; then
    sudo -n true 2>/dev/null || die "$1 is not installed and this is neither root nor allowed sudo: install \
Debian's package '$1' (apt-get install $1)"
    as=(sudo -n)
  fi
  if [ -z "$apt_updated" ]; then "${as[@]}" apt-get update -qq; apt_updated=1; fi
  say "installing Debian's $1"
  "${as[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# url_part URL -> sets u_user u_host u_port u_db
parse_url() {
  local rest=${1#*://}
  local auth=
  if [[ $rest == *@* ]]; then auth=${rest%%@*}; rest=${rest#*@}; fi
  u_user=${auth%%:*}
  local hostport=${rest%%/*}
  u_db=
  if [[ $rest == */* ]]; then u_db=${rest#*/}; fi
  u_db=${u_db%%\?*}
  u_host=${hostport%%:*}
  u_port=${hostport#*:}
  if [ "$u_port" = "$hostport" ]; then u_port=; fi
}

is_local() { [ "$1" = 127.0.0.1 ] || [ "$1" = localhost ]; }

port_free() {
  # true when nothing listens on 127.0.0.1:$1
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

wait_for() { # seconds command...
  local n=$1; shift
  for _ in $(seq 1 "$((n * 5))"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

# ---------------------------------------------------------------- PostgreSQL
u_host=
if [[ $pg_url == postgres* ]]; then parse_url "$pg_url"; fi
pg_user=${u_user:-postgres}; pg_host=$u_host; pg_port=${u_port:-5432}
if is_local "$pg_host"; then
  pg_bindir() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -n "$d" ]; then echo "$d"; fi
  }
  pg_ok() { "$(pg_bindir)/psql" -h 127.0.0.1 -p "$pg_port" -U "$pg_user" -d postgres -Atqc 'select 1' -w; }
  if [ -z "$(pg_bindir)" ] || [ ! -x "$(pg_bindir)/initdb" ]; then apt_install postgresql; fi
  bindir=$(pg_bindir)
  if PGCONNECT_TIMEOUT=3 pg_ok >/dev/null 2>&1; then
    :  # a server answers and lets the URL's user in: use it
  else
    port_free "$pg_port" || die "something listens on 127.0.0.1:$pg_port but does not let user '$pg_user' in \
without a password; stop it, or point TEST_DATABASE_URL at a PostgreSQL that does (e.g. make test TEST_DATABASE_URL=postgres://user:pass@127.0.0.1:5432/fairway)"
    major=$(basename "$(dirname "$bindir")")
    data=$base/postgresql-$major
    run_pg() { if is_root; then runuser -u postgres -- "$@"; else "$@"; fi; }
    mkdir -p "$base"
    if is_root; then chown postgres:postgres "$base"; fi
    if [ ! -s "$data/PG_VERSION" ]; then
      say "creating a PostgreSQL $major cluster in $data"
      run_pg "$bindir/initdb" -D "$data" -U "$pg_user" --auth=trust --encoding=UTF8 --no-locale >/dev/null
    fi
    say "starting PostgreSQL $major on 127.0.0.1:$pg_port ($data)"
    # Settings for a test server: no fsync (the data is thrown away), enough connections for the parallel suite.
    run_pg "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start -o \
      "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data -c max_connections=300 \
       -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB" >/dev/null \
      || { tail -20 "$data/server.log" >&2; die "PostgreSQL did not start (log: $data/server.log)"; }
    wait_for 30 pg_ok || die "PostgreSQL started but does not answer on 127.0.0.1:$pg_port"
  fi
fi

# ---------------------------------------------------------------- Redis
u_host= u_port=
if [[ $redis_url == redis://* ]]; then parse_url "$redis_url"; fi
redis_host=$u_host; redis_port=${u_port:-6379}
if is_local "$redis_host"; then
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server
  redis_ok() { [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" = PONG ]; }
  if ! redis_ok; then
    port_free "$redis_port" || die "something listens on 127.0.0.1:$redis_port but does not answer Redis' PING"
    mkdir -p "$base/redis"
    say "starting Redis on 127.0.0.1:$redis_port ($base/redis)"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
      --dir "$base/redis" --logfile "$base/redis/server.log" --pidfile "$base/redis/redis-$redis_port.pid"
    wait_for 30 redis_ok || die "Redis did not start (log: $base/redis/server.log)"
  fi
fi
