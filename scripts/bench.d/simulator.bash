# Sourced by the bench pieces 30-apple.sh and 40-recheck.sh (not a piece itself: the driver sources only *.sh).
# Uses $bin, $sim, $work, $sim_pid and the cluster (PGHOST).

# Starts `storesim serve` on the scenario spec in file $1 for database $2, in directory $3 (written by storesim init,
# wall clock), creates and migrates the database; sets sim_url and sim_pid.
start_bench_simulator() {
    local spec=$1 db=$2 dir=$3
    "$sim" init --dir "$dir" --scenario "$spec" --clock wall --no-financial-reports \
        --database-url "host=$PGHOST port=$PGPORT user=postgres dbname=$db" >/dev/null
    "$sim" serve --dir "$dir" --port 0 >"$dir.url" 2>"$dir.log" &
    sim_pid=$!
    for _ in $(seq 600); do [ -s "$dir.url" ] && break; sleep 0.1; done
    sim_url=$(head -1 "$dir.url")
    [ -n "$sim_url" ] || { cat "$dir.log" >&2; return 1; }
    "$PG_BIN/createdb" "$db"
    "$bin" migrate --config "$dir/storerecon.yaml" --quiet
}

# Calls the simulator granted on endpoint $1 (all apps and environments), from /admin/stats.
simulator_granted() {
    curl -fsS "$sim_url/admin/stats" | jq --arg e "$1" '[.endpoints[] | select(.endpoint == $e) | .granted] | add // 0'
}

# Prints `true` or `false`: whether the Python expression $1 holds.
holds() { python3 -c "print('true' if ($1) else 'false')"; }
