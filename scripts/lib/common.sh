# Shared shell helpers for scripts/: Debian packages and a throwaway PostgreSQL cluster.
# Source it; it defines functions and changes nothing by itself.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

log() { printf '%s\n' "==> $*" >&2; }

# Installs the Debian packages storerecon needs when any is missing (apt-get update once, then install).
ensure_packages() {
    local wanted=(postgresql-15 libpq-dev libcurl4-openssl-dev zlib1g-dev tzdata "$@")
    local missing=()
    local package
    for package in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" -ne 0 ]; then
            log "missing Debian packages: ${missing[*]} (run as root, or install them)"
            return 1
        fi
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # The postgresql-common hook would create and start a system cluster; we only want the binaries.
        mkdir -p /etc/postgresql-common
        if [ ! -f /etc/postgresql-common/createcluster.conf ] || ! grep -q '^create_main_cluster *= *false' \
            /etc/postgresql-common/createcluster.conf; then
            echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
        fi
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# Runs a command as the cluster's owner: `postgres` when we are root (PostgreSQL refuses to run as root).
as_pg_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Starts a throwaway cluster on a unix socket in a new temporary directory (no TCP), fsync off.
# Sets PG_TMP (the directory), PGHOST, PGPORT, PGUSER; call stop_cluster to remove it.
start_cluster() {
    PG_TMP=$(mktemp -d /tmp/storerecon-pg.XXXXXX)
    chmod 755 "$PG_TMP"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$PG_TMP"; fi
    as_pg_owner "$PG_BIN/initdb" -D "$PG_TMP/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$PG_TMP/initdb.log" 2>&1 || { cat "$PG_TMP/initdb.log" >&2; stop_cluster; return 1; }
    as_pg_owner "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 start \
        -o "-c listen_addresses='' -c unix_socket_directories='$PG_TMP' -c fsync=off -c synchronous_commit=off \
            -c full_page_writes=off -c max_connections=200 -c shared_buffers=256MB" >/dev/null \
        || { cat "$PG_TMP/server.log" >&2; stop_cluster; return 1; }
    export PGHOST="$PG_TMP" PGPORT=5432 PGUSER=postgres
    log "PostgreSQL running on socket $PG_TMP"
}

# Stops the cluster (also one that failed to start in time: pg_ctl leaves it starting) and removes its directory.
stop_cluster() {
    if [ -n "${PG_TMP:-}" ]; then
        if [ -d "$PG_TMP/data" ]; then
            as_pg_owner "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate stop >/dev/null 2>&1 || true
        fi
        rm -rf "$PG_TMP"
    fi
}
