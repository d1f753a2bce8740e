# Sourced by scripts/bench: refund requests (issue 39). RQ_APPS_PER_STORE Apple and as many Google apps, each with
# RQ_REQUESTS open refund requests (Apple CONSUMPTION_REQUEST in Notification History, Google pending refund reviews
# on storerecon's Pub/Sub subscription) and the backend's facts for all of them (consumption.csv from storesim init),
# answered by ONE `storerecon run refund-requests`, the simulator enforcing the published limits (Apple per second,
# not only per hour, so that a burst would be refused). Figures: the wall time against the least time the limits
# allow for exactly the calls made (target <= 1.2), the store's refusals (target 0), the answers sent (every request
# but those the rules skip: past the deadline, family-shared or an unsupported type), the peak RSS; then one app
# run again with nothing new (target < 1 s). Uses $bin, $sim, $work, record, now_ms, stop_simulator, the cluster.
# Environment: RQ_APPS_PER_STORE=25, RQ_REQUESTS=200 (per app), RQ_LATENCY_MS=0 (each store answer's delay).
source scripts/bench.d/simulator.bash
rq_per_store=${RQ_APPS_PER_STORE:-25}
rq_requests=${RQ_REQUESTS:-200}
rq_latency=${RQ_LATENCY_MS:-0}

rq_spec() { # seed apps-per-store requests-per-app
    python3 - "$@" <<'PY'
import json, sys, time
seed, per, requests = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
apps = []
for i in range(1, per + 1):
    apps.append({"id": f"rq-ios-{i}", "platform": "apple", "storeId": f"com.bench.rqios{i}",
                 "appAppleId": 3000000000 + i})
    apps.append({"id": f"rq-android-{i}", "platform": "google", "storeId": f"com.bench.rq{i}"})
# Twice as many purchases per app as requests: some purchases cannot be asked about (not charged yet at the time).
n = 2 * requests * len(apps)
print(json.dumps({"seed": seed, "anchorMillis": int(time.time() * 1000), "subscriptions": n,
                  "oneTimePurchases": n // 4, "refunds": len(apps), "historyDays": 60, "futureDays": 0,
                  "sandboxShare": 0, "consumptionRequests": per * requests, "refundReviews": per * requests,
                  "apps": apps}))
PY
}

# The least time the published limits allow for the calls in /admin/stats ($1): per app and quota bucket, N calls
# under "n in any w seconds" need floor((N - 1) / n) * w; the apps' quotas are their own, so the run needs the
# largest. Google's Orders bucket counts the order reads (googleOrders) and the answers (googleReviewRefund)
# together. Pub/Sub and the token endpoint publish no limit here (0). Prints "ms app/bucket".
rq_least_ms() {
    python3 - "$1" <<'PY'
import json, sys
buckets = {"appleConsumption": "appleConsumption", "appleNotificationHistory": "appleNotificationHistory",
           "googleOrders": "googleOrders", "googleReviewRefund": "googleOrders"}
limits = {"appleConsumption": (50, 1000), "appleNotificationHistory": (50, 1000), "googleOrders": (3000, 60000)}
calls = {}
for row in json.loads(sys.argv[1])["endpoints"]:
    bucket = buckets.get(row["endpoint"])
    if bucket:
        calls[(row["app"], bucket)] = calls.get((row["app"], bucket), 0) + row["granted"]
least, which = 0, "none"
for (app, bucket), granted in sorted(calls.items()):
    n, w = limits[bucket]
    if granted > 0:
        ms = (granted - 1) // n * w
        if ms > least: least, which = ms, f'{app}/{bucket}'
print(least, which)
PY
}

# Answers that reached the stores in the stats ($1): Send Consumption Information and orders.reviewrefund calls.
rq_answers() {
    jq '[.endpoints[] | select(.endpoint == "appleConsumption" or .endpoint == "googleReviewRefund") | .granted]
        | add // 0' <<<"$1"
}

# Where the wall time over the least went, from the store's side: the Apple answers' arrivals ($1, the JSON of
# /admin/arrivals, ms on the wall clock) after the run's start ($2). An app's last call arrives at least a window
# after the call a window's count (n) before it, and so on back to its call number (N - 1) mod n: prints the
# latest arrival of that call over the apps (the start the run then had to wait out from), and the median gap
# between a call and the one n later (the window as this run spent it; the store's is 1,000 ms).
rq_windows() {
    python3 - "$1" "$2" <<'PY'
import json, statistics, sys
n = 50
started = int(sys.argv[2])
starts, gaps = [], []
for app in json.loads(sys.argv[1])["apps"]:
    times = [t - started for t in app["arrivals"]]
    if not times:
        continue
    starts.append(times[(len(times) - 1) % n])
    gaps += [b - a for a, b in zip(times, times[n:])]
print(max(starts, default=0), int(statistics.median(gaps)) if gaps else 0)
PY
}

dir="$work/refund-requests"
db=bench_refund_requests
apps=$(( 2 * rq_per_store ))
log "refund requests: $apps apps of $rq_requests open requests each, one run refund-requests (store latency $rq_latency ms)"
rq_spec 39 "$rq_per_store" "$rq_requests" >"$dir.spec.json"
"$sim" init --dir "$dir" --scenario "$dir.spec.json" --clock wall --no-financial-reports \
    --database-url "host=$PGHOST port=$PGPORT user=postgres dbname=$db" >/dev/null
"$sim" serve --dir "$dir" --port 0 --quota-wall-clock true --latency "${rq_latency}ms" >"$dir.url" 2>"$dir.log" &
sim_pid=$!
for _ in $(seq 600); do [ -s "$dir.url" ] && break; sleep 0.1; done
sim_url=$(head -1 "$dir.url")
[ -n "$sim_url" ] || { cat "$dir.log" >&2; return 1; }
# Apple's limits counted per second (Apple enforces them per hour): a burst over 50 in a second is refused.
curl -fsS -X POST "$sim_url/admin/quotas" -d '{"appleEnforcement": "perSecond"}' >/dev/null
"$PG_BIN/createdb" "$db"
"$bin" migrate --config "$dir/storerecon.yaml" --quiet
"$bin" import consumption "$dir/consumption.csv" --config "$dir/storerecon.yaml" --quiet
load=$(cut -d' ' -f1-3 /proc/loadavg)
# CPU time of process $1 in ms (utime + stime, from /proc); with $2 = children, that of its ended children too.
cpu_ms() {
    awk -v hz="$(getconf CLK_TCK)" -v children="${2:-}" \
        '{ print int(($14 + $15 + (children ? $16 + $17 : 0)) * 1000 / hz) }' "/proc/$1/stat"
}
# PostgreSQL's: the postmaster's own and its ended children's (each session's backend ends with the run).
postmaster=$(head -1 "$PG_TMP/data/postmaster.pid")
sim_cpu_before=$(cpu_ms "$sim_pid")
pg_cpu_before=$(cpu_ms "$postmaster" children)
started=$(now_ms)
/usr/bin/time -f '%M %U %S' -o "$dir.rss" "$bin" run refund-requests --config "$dir/storerecon.yaml" --quiet \
    2>"$dir.run.log" || log "refund requests: run refund-requests exited $? (see $dir.run.log)"
run_ms=$(( $(now_ms) - started ))
sim_cpu=$(( $(cpu_ms "$sim_pid") - sim_cpu_before ))
sleep 0.2 # the run's backends are reaped
pg_cpu=$(( $(cpu_ms "$postmaster" children) - pg_cpu_before ))
read -r rss_kb user_s sys_s < <(tail -1 "$dir.rss")
run_cpu=$(python3 -c "print(round(($user_s + $sys_s) * 1000))")
stats=$(curl -fsS "$sim_url/admin/stats")
read -r least_ms least_of < <(rq_least_ms "$stats")
refused=$(jq '[.endpoints[] | .refused] | add // 0' <<<"$stats")
refused_where=$(jq -r '[.endpoints[] | select(.refused > 0) | "\(.app)/\(.endpoint) \(.refused)"] | join(", ")' <<<"$stats")
[ "$refused" -eq 0 ] || log "refund requests: refused by the store: $refused_where"
# Every answer the stores took, each request answered once: the stores' count equals the database's.
sent=$(rq_answers "$stats")
read -r requests answered skipped other < <(psql -Atq -F ' ' -d "$db" -c "
    SELECT count(*), count(*) FILTER (WHERE answer = 'answered'),
           count(*) FILTER (WHERE answer IN ('missed', 'not_supported')),
           count(*) FILTER (WHERE answer IS NULL OR answer NOT IN ('answered', 'missed', 'not_supported'))
    FROM refund_request")
log "refund requests: $requests requests, $answered answered, $skipped skipped by the rules, $other other; $sent answers" \
    "reached the stores; least time $least_ms ms ($least_of); load $load"
ratio=$(python3 -c "print(round($run_ms / max(1, $least_ms), 3))")
record "refund_requests_${apps}_apps_wall" "$run_ms" ms "$ratio" "<=1.2 of the least the limits allow ($least_ms ms)" \
    "$(holds "$ratio <= 1.2")"
record "refund_requests_${apps}_apps_refusals" "$refused" calls null "0" "$(holds "$refused == 0")"
record "refund_requests_${apps}_apps_answers" "$sent" calls \
    "$(python3 -c "print(round($answered / max(1, $apps * $rq_requests - $skipped), 3))")" \
    "$(( apps * rq_requests - skipped )) ($apps x $rq_requests less $skipped the rules skip)" \
    "$(holds "$requests == $apps * $rq_requests and $sent == $answered and $answered + $skipped == $requests")"
record "refund_requests_${apps}_apps_rss" "$rss_kb" KiB null "measured" true
# Where the host's time went: storerecon's, the simulator's and PostgreSQL's CPU, against the cores' time during the
# run.
cores=$(nproc)
cores_share() { python3 -c "print(round($1 / ($cores * $run_ms), 3))"; }
record "refund_requests_${apps}_apps_storerecon_cpu" "$run_cpu" ms "$(cores_share "$run_cpu")" \
    "of $cores cores x wall" true
record "refund_requests_${apps}_apps_simulator_cpu" "$sim_cpu" ms "$(cores_share "$sim_cpu")" \
    "of $cores cores x wall" true
record "refund_requests_${apps}_apps_postgres_cpu" "$pg_cpu" ms "$(cores_share "$pg_cpu")" \
    "of $cores cores x wall" true
# The three together: near 1, the run waited for CPU, and its wall time says more of the host than of the pacing.
busy=$(( run_cpu + sim_cpu + pg_cpu ))
record "refund_requests_${apps}_apps_host_busy" "$busy" ms "$(cores_share "$busy")" \
    "of $cores cores x wall (storerecon, simulator and PostgreSQL)" true
record "refund_requests_${apps}_apps_load" "${load%% *}" "load" null "reported (1-min load average at the start)" true
read -r first_window turn < <(rq_windows "$(curl -fsS "$sim_url/admin/arrivals?endpoint=appleConsumption")" "$started")
record "refund_requests_${apps}_apps_first_window" "$first_window" ms null \
    "measured (the latest Apple app's call that its last window counts from, after the start)" true
record "refund_requests_${apps}_apps_window_turn" "$turn" ms "$(python3 -c "print(round($turn / 1000, 3))")" \
    "measured (median time between an Apple answer and the one 50 later; the window is 1000 ms)" true

# One app again with nothing new: each store's, alone (the overlap of Apple's history is read again and verified).
for app in rq-ios-1 rq-android-1; do
    started=$(now_ms)
    "$bin" run refund-requests --app "$app" --config "$dir/storerecon.yaml" --quiet 2>>"$dir.run.log" \
        || log "refund requests: run refund-requests --app $app exited $?"
    again_ms=$(( $(now_ms) - started ))
    record "refund_requests_nothing_new_${app}" "$again_ms" ms "$(python3 -c "print(round($again_ms / 1000, 3))")" \
        "<1000" "$(holds "$again_ms < 1000")"
done
stats=$(curl -fsS "$sim_url/admin/stats")
stop_simulator
resent=$(( $(rq_answers "$stats") - sent ))
record "refund_requests_nothing_new_answers" "$resent" calls null "0" "$(holds "$resent == 0")"
