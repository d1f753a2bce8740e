# Sourced by scripts/bench: a fleet in one process. 12 apps (6 Google, 6 Apple) served by one simulator, run by one
# `storerecon run nightly`, against each app run alone on a database of its own (the same scenario): the fleet's
# wall time over the slowest single app's (target <= 1.3), the process's peak RSS, the most database connections
# it held, and the store's refusals (target 0). Uses $bin, $sim, $work, record, now_ms, stop_simulator, the cluster.
# Environment: FLEET_APPS_PER_STORE=6, FLEET_SUBSCRIPTIONS=2000 (per app), FLEET_LATENCY_MS="0 1500".
source scripts/bench.d/simulator.bash
fleet_per_store=${FLEET_APPS_PER_STORE:-6}
fleet_subscriptions=${FLEET_SUBSCRIPTIONS:-2000}
fleet_latencies=${FLEET_LATENCY_MS:-"0 1500"}

fleet_spec() { # seed apps-per-store subscriptions-per-app
    python3 - "$@" <<'PY'
import json, sys, time
seed, per, subs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
apps = []
for i in range(1, per + 1):
    apps.append({"id": f"fleet-android-{i}", "platform": "google", "storeId": f"com.bench.fleet{i}"})
    apps.append({"id": f"fleet-ios-{i}", "platform": "apple", "storeId": f"com.bench.fleetios{i}",
                 "appAppleId": 2000000000 + i})
n = subs * len(apps)
print(json.dumps({"seed": seed, "anchorMillis": int(time.time() * 1000) - 7200000, "subscriptions": n,
                  "oneTimePurchases": n // 5, "refunds": n // 10, "historyDays": 25, "futureDays": 0,
                  "sandboxShare": 0, "apps": apps}))
PY
}

# A fresh database $1 for the fleet's configuration, migrated and with the subscriptions imported.
fleet_database() {
    "$PG_BIN/createdb" "$1"
    STORERECON_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=$1" \
        "$bin" migrate --config "$dir/storerecon.yaml" --quiet
    STORERECON_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=$1" \
        "$bin" import subscriptions "$dir/subscriptions.csv" --config "$dir/storerecon.yaml" --quiet
}

# Runs `run nightly` with arguments "$@" on database $db; sets run_ms, run_rss_kb, run_connections.
fleet_run() {
    (while :; do
        "$PG_BIN/psql" -Atqc "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db'" postgres 2>/dev/null
        sleep 0.1
    done) >"$dir.connections" &
    local poll=$!
    local started
    started=$(now_ms)
    STORERECON_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=$db" \
        /usr/bin/time -f '%M' -o "$dir.rss" "$bin" run nightly --config "$dir/storerecon.yaml" --quiet "$@" \
        2>>"$dir.runs.log" || echo "run nightly $* exited $?" >>"$dir.runs.log"
    run_ms=$(( $(now_ms) - started ))
    kill "$poll" 2>/dev/null || true
    wait "$poll" 2>/dev/null || true
    run_rss_kb=$(tail -1 "$dir.rss")
    run_connections=$(sort -n "$dir.connections" | tail -1)
}

for latency in $fleet_latencies; do
    dir="$work/fleet-$latency"
    apps=$(( 2 * fleet_per_store ))
    log "fleet: $apps apps of $fleet_subscriptions subscriptions each, store latency $latency ms"
    fleet_spec 61 "$fleet_per_store" "$fleet_subscriptions" >"$dir.spec.json"
    "$sim" init --dir "$dir" --scenario "$dir.spec.json" --clock wall --no-financial-reports \
        --database-url "host=$PGHOST port=$PGPORT user=postgres dbname=bench_fleet_$latency" >/dev/null
    "$sim" serve --dir "$dir" --port 0 --latency "$latency" >"$dir.url" 2>"$dir.log" &
    sim_pid=$!
    for _ in $(seq 600); do [ -s "$dir.url" ] && break; sleep 0.1; done
    sim_url=$(head -1 "$dir.url")
    ids=$(python3 -c "import json,sys; print(' '.join(a['id'] for a in json.load(open(sys.argv[1]))['apps']))" \
        "$dir.spec.json")
    # Each app alone, on its own database (the store counts quotas per app, so one app's run does not slow another's).
    slowest_ms=0
    slowest_app=
    single_rss_kb=0
    for app in $ids; do
        db="bench_fleet_${latency}_${app//-/_}"
        fleet_database "$db"
        fleet_run --app "$app"
        if [ "$run_ms" -gt "$slowest_ms" ]; then slowest_ms=$run_ms; slowest_app=$app; fi
        if [ "$run_rss_kb" -gt "$single_rss_kb" ]; then single_rss_kb=$run_rss_kb; fi
    done
    sleep 31 # past the last single runs' Google quota windows
    curl -fsS -X POST "$sim_url/admin/stats/reset" >/dev/null
    db="bench_fleet_$latency"
    fleet_database "$db"
    fleet_run
    refused=$(curl -fsS "$sim_url/admin/stats" | jq '[.endpoints[] | .refused] | add // 0')
    stop_simulator
    ratio=$(python3 -c "print(round($run_ms / $slowest_ms, 3))")
    record "fleet_${apps}_apps_${latency}ms_wall" "$run_ms" ms "$ratio" "<=1.3 of slowest ($slowest_app ${slowest_ms} ms)" \
        "$(holds "$ratio <= 1.3")"
    record "fleet_${apps}_apps_${latency}ms_rss" "$run_rss_kb" KiB "$(python3 -c "print(round($run_rss_kb / $single_rss_kb, 2))")" \
        "vs the largest single app ${single_rss_kb} KiB" true
    record "fleet_${apps}_apps_${latency}ms_connections" "$run_connections" connections null "reported" true
    record "fleet_${apps}_apps_${latency}ms_refusals" "$refused" calls null "0" "$(holds "$refused == 0")"
done
