# Sourced by scripts/bench: Google voided ingest, memory and quota use. Uses $bin, $sim, $work, record, now_ms and the cluster (PGHOST).
# --- Google voided purchases: storerecon sync google-voided against storesim serve (release builds, one host) ----
# A scenario of one Google app whose voids all fall in the last 30 days: subscriptions (renewals share a purchase
# token), one-time purchases refunded in parts, voids recorded days late.
voided_sizes=${VOIDED_SIZES:-"250000 1000000"}
voided_quota_rows=${VOIDED_QUOTA_ROWS:-64000}

# Starts storesim serve on a backlog of about $1 rows for database $2, in directory $3 (further arguments go to
# storesim serve); sets sim_url. With voided_apps=K (default 1) the backlog is shared by K Google apps,
# bench-android-1 ... bench-android-K, each with its own package.
start_voided_simulator() {
    local rows=$1 db=$2 dir=$3 apps='[{"id": "bench-android", "platform": "google", "storeId": "com.bench.voided"}]'
    shift 3
    if [ "${voided_apps:-1}" -gt 1 ]; then
        apps=$(python3 -c "import json; print(json.dumps([{'id': f'bench-android-{i}', 'platform': 'google',
            'storeId': f'com.bench.voided{i}'} for i in range(1, $voided_apps + 1)]))")
    fi
    # About 1.1 rows per refund (partial refunds add parts), a few of them recorded too late to be listed yet.
    local refunds=$(( rows * 100 / 106 ))
    cat >"$dir.spec.json" <<JSON
{"seed": 7, "anchorMillis": $(( $(date +%s) * 1000 )), "subscriptions": $(( refunds * 3 / 2 )),
 "oneTimePurchases": $refunds, "refunds": $refunds, "historyDays": 30, "futureDays": 0,
 "lateVoidShare": 0.1, "renewalVoidShare": 0.2, "apps": $apps}
JSON
    "$sim" init --dir "$dir" --scenario "$dir.spec.json" --clock wall --no-financial-reports \
        --database-url "host=$PGHOST port=$PGPORT user=postgres dbname=$db" >/dev/null
    "$sim" serve --dir "$dir" --port 0 "$@" >"$dir.url" 2>"$dir.log" &
    sim_pid=$!
    for _ in $(seq 600); do [ -s "$dir.url" ] && break; sleep 0.1; done
    sim_url=$(head -1 "$dir.url")
    [ -n "$sim_url" ] || { cat "$dir.log" >&2; return 1; }
    "$PG_BIN/createdb" "$db"
    "$bin" migrate --config "$dir/storerecon.yaml" --quiet
}

for size in $voided_sizes; do
    db="bench_voided_$size"
    dir="$work/voided-$size"
    log "Google voided: generating and serving a backlog of about $size rows"
    start_voided_simulator "$size" "$db" "$dir"
    # Limits lifted on both sides: this measures fetch + decode + upsert, not the quota.
    curl -fsS -X POST "$sim_url/admin/quotas" \
        -d '{"voidedPerWindow": 100000000, "voidedPerMinute": 100000000, "voidedPerDay": 100000000,
             "developerApiPerDay": 100000000}' >/dev/null
    printf 'limits:\n  bench-android: { voidedPer30Seconds: 100000000, voidedPerDay: 100000000, ordersPerMinute: 100000000 }\n' \
        >>"$dir/storerecon.yaml"
    log "Google voided: storerecon sync google-voided ($size)"
    start=$(now_ms)
    /usr/bin/time -v -o "$dir.time" "$bin" sync google-voided --config "$dir/storerecon.yaml" --quiet
    sync_ms=$(( $(now_ms) - start ))
    stop_simulator
    voided_rows=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund")
    # The amounts come from the Orders API (one orders.batchget per stored page, at most 1000 ids): its calls per
    # 1000 voided rows, and how many refunds got the store's amount.
    orders_calls=$(psql -Atq -d "$db" -c "SELECT coalesce(sum(used), 0) FROM quota_day WHERE api = 'google.orders'")
    priced_rows=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund WHERE amount_source = 'store'")
    record "Orders calls per 1000 rows ($voided_rows)" \
        "$(python3 -c "print(round($orders_calls * 1000 / max(1, $voided_rows), 3))")" "calls" \
        "$(python3 -c "print(round($priced_rows / max(1, $voided_rows), 4))")" "<=1.1" \
        "$(python3 -c "print('true' if $orders_calls * 1000 <= 1.1 * max(1, $voided_rows) + 1000 else 'false')")"
    # Refund rows whose amount was written on their own page (a heap-only update, no index entry; migration 0018).
    read -r hot updates < <(psql -Atq -F ' ' -d "$db" \
        -c "SELECT n_tup_hot_upd, n_tup_upd FROM pg_stat_user_tables WHERE relname = 'refund'")
    record "amounts updates kept on their page ($updates)" \
        "$(python3 -c "print(round($hot / max(1, $updates), 3))")" "share" "1" ">=0.7" \
        "$(python3 -c "print('true' if $hot >= 0.7 * $updates else 'false')")"
    rss_kb=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$dir.time")
    rss_mb=$(python3 -c "print(round($rss_kb / 1024, 1))")
    eval "rss_mb_$size=$rss_mb"
    if [ -z "${voided_ingest_done:-}" ]; then
        voided_ingest_done=1
        # The reference: the same rows, exported, the table emptied, and loaded back with COPY (same table, same
        # indexes and constraints); the fastest of three loads, so noise on a shared machine can only make the
        # ratio look worse, never better.
        psql -q -d "$db" -c "\\copy (SELECT * FROM refund) TO '$dir.refund.copy'"
        voided_copy_ms=
        for _ in 1 2 3; do
            psql -q -d "$db" -c "TRUNCATE refund CASCADE"
            start=$(now_ms)
            psql -q -d "$db" -c "\\copy refund FROM '$dir.refund.copy'"
            took=$(( $(now_ms) - start ))
            if [ -z "$voided_copy_ms" ] || [ "$took" -lt "$voided_copy_ms" ]; then voided_copy_ms=$took; fi
        done
        voided_copy_rate=$(( voided_rows * 1000 / voided_copy_ms ))
        voided_rate=$(( voided_rows * 1000 / sync_ms ))
        # Time per page with limits lifted, for the quota-use figure below.
        voided_page_ms=$(( sync_ms * 1000 / (voided_rows + 999) ))
        ratio=$(python3 -c "print(round($voided_rate / $voided_copy_rate, 3))")
        record "raw COPY into refund" "$voided_copy_rate" "rows/s" "1" "reference" "true"
        record "voided sync ($voided_rows rows)" "$voided_rate" "rows/s" "$ratio" ">=0.5" \
            "$(python3 -c "print('true' if $ratio >= 0.5 else 'false')")"
    fi
    record "voided sync peak RSS ($voided_rows)" "$rss_mb" "MB" "1" "<=150" \
        "$(python3 -c "print('true' if $rss_mb <= 150 else 'false')")"
done
# The ledger's intake alone (issue 17: decode, merge repeats, map to records, one statement per page), without the
# Orders API's amounts: the same backlog with the Orders API refusing (403), so no amount is asked after the first
# refused call. Compared with the raw COPY above.
set -- $voided_sizes
if [ -n "${voided_copy_rate:-}" ] && [ "${VOIDED_INTAKE:-1}" != 0 ]; then
    db="bench_voided_intake"
    dir="$work/voided-intake"
    log "Google voided: intake alone, the Orders API refusing ($1)"
    start_voided_simulator "$1" "$db" "$dir" --orders-permission-denied
    curl -fsS -X POST "$sim_url/admin/quotas" \
        -d '{"voidedPerWindow": 100000000, "voidedPerMinute": 100000000, "voidedPerDay": 100000000,
             "developerApiPerDay": 100000000}' >/dev/null
    printf 'limits:\n  bench-android: { voidedPer30Seconds: 100000000, voidedPerDay: 100000000, ordersPerMinute: 100000000 }\n' \
        >>"$dir/storerecon.yaml"
    start=$(now_ms)
    "$bin" sync google-voided --config "$dir/storerecon.yaml" --quiet
    intake_ms=$(( $(now_ms) - start ))
    stop_simulator
    intake_rows=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund")
    intake_rate=$(( intake_rows * 1000 / intake_ms ))
    ratio=$(python3 -c "print(round($intake_rate / $voided_copy_rate, 3))")
    record "voided intake, no amounts ($intake_rows rows)" "$intake_rate" "rows/s" "$ratio" ">=0.5" \
        "$(python3 -c "print('true' if $ratio >= 0.5 else 'false')")"
fi
# The intake with amounts of a fleet (issue 28): one process serving many packages must store what Google sends
# them all (at most 1000 rows/s each). The same backlog shared by VOIDED_FLEET_APPS Google apps (default 2, one per
# core of the bench's machine), run side by side by one `storerecon run nightly` with limits lifted, each app on its
# own connection; every row priced. Compared with the raw COPY above, in the same run.
voided_fleet_apps=${VOIDED_FLEET_APPS:-2}
if [ -n "${voided_copy_rate:-}" ] && [ "$voided_fleet_apps" -gt 1 ]; then
    db="bench_voided_fleet"
    dir="$work/voided-fleet"
    log "Google voided: intake with amounts, $voided_fleet_apps apps side by side in one process ($1)"
    voided_apps=$voided_fleet_apps start_voided_simulator "$1" "$db" "$dir"
    curl -fsS -X POST "$sim_url/admin/quotas" \
        -d '{"voidedPerWindow": 100000000, "voidedPerMinute": 100000000, "voidedPerDay": 100000000,
             "developerApiPerDay": 100000000}' >/dev/null
    { echo "limits:"; for i in $(seq "$voided_fleet_apps"); do
        echo "  bench-android-$i: { voidedPer30Seconds: 100000000, voidedPerDay: 100000000, ordersPerMinute: 100000000 }"
    done; } >>"$dir/storerecon.yaml"
    start=$(now_ms)
    "$bin" run nightly --config "$dir/storerecon.yaml" --quiet
    fleet_ms=$(( $(now_ms) - start ))
    stop_simulator
    read -r fleet_rows fleet_priced < <(psql -Atq -F ' ' -d "$db" \
        -c "SELECT count(*), count(*) FILTER (WHERE amount_source = 'store') FROM refund")
    fleet_rate=$(( fleet_rows * 1000 / fleet_ms ))
    ratio=$(python3 -c "print(round($fleet_rate / $voided_copy_rate, 3))")
    record "voided intake with amounts, $voided_fleet_apps apps in one process ($fleet_rows rows, $fleet_priced priced)" \
        "$fleet_rate" "rows/s" "$ratio" ">=0.3" "$(python3 -c "print('true' if $ratio >= 0.3 else 'false')")"
fi
if [ $# -ge 2 ]; then
    first_rss=$(eval echo "\$rss_mb_$1")
    last_rss=$(eval echo "\$rss_mb_${!#}")
    ratio=$(python3 -c "print(round($last_rss / $first_rss, 3))")
    record "voided RSS ${!#} / $1 rows" "$last_rss" "MB" "$ratio" "<=1.25" \
        "$(python3 -c "print('true' if $ratio <= 1.25 else 'false')")"
fi

# Quota use: a backlog of about 61 pages under the published 30 calls in any 30 s, enforced on both sides. The
# fastest any client can go is 30 calls at once and the next 30 once the first leave the window: N pages need at
# least floor((N - 1) / 30) * 30 s, plus the pages after the last window opened, one after the other (each needs
# the previous page's token), at the per-page time measured above with limits lifted. The ratio is that over the
# time the sync took: calls granted ÷ calls the limit allowed while work remained (1 = every slot used). The
# storerecon side cannot shorten its 30-s window, so the run is not scaled down in time.
if [ "$voided_quota_rows" -gt 0 ]; then
    db="bench_voided_quota"
    dir="$work/voided-quota"
    log "Google voided: syncing about $voided_quota_rows rows under the published 30-per-30-s limit"
    start_voided_simulator "$voided_quota_rows" "$db" "$dir"
    curl -fsS -X POST "$sim_url/admin/quotas" -d '{"useWallClock": true}' >/dev/null
    start=$(now_ms)
    "$bin" sync google-voided --config "$dir/storerecon.yaml" --quiet
    sync_ms=$(( $(now_ms) - start ))
    stats=$(curl -fsS "$sim_url/admin/stats")
    stop_simulator
    granted=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .granted] | add' <<<"$stats")
    refused=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .refused] | add' <<<"$stats")
    most=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .maxInAny30Seconds] | max' <<<"$stats")
    fastest_ms=$(( (granted - 1) / 30 * 30000 + (granted - 1) % 30 * ${voided_page_ms:-0} ))
    ratio=$(python3 -c "print(round(min(1, $fastest_ms / $sync_ms), 3) if $fastest_ms > 0 else 1)")
    record "voided quota use ($granted calls)" "$sync_ms" "ms" "$ratio" ">=0.95" \
        "$(python3 -c "print('true' if $ratio >= 0.95 else 'false')")"
    record "voided refused by the store" "$refused" "calls" "0" "0" "$( [ "$refused" -eq 0 ] && echo true || echo false)"
    record "voided most in any 30 s" "$most" "calls" "$(python3 -c "print(round($most / 30, 3))")" "<=30" \
        "$( [ "$most" -le 30 ] && echo true || echo false)"
fi


# Quota use at store latency (issue 20): a lone backfill of about $voided_latency_rows rows under the published 30
# per 30 s, with every store answer held 0 ms and 1500 ms (storesim --latency), then the same backlog as an
# incremental sync and a backfill of its older half at once. Target: within 1/0.95 of floor((N - 1) / 30) * 30 s
# for the N calls granted, 0 refusals, the ledger equal to the store's truth. VOIDED_LATENCIES="0 1500" by default.
# The whole run is measured (start-up, the access token, the last answer and the last Orders call included: about
# three answer times that no quota use can shorten), and beside it the quota span alone, first grant to last.
voided_latency_rows=${VOIDED_LATENCY_ROWS:-100000}
voided_latencies=${VOIDED_LATENCIES:-"0 1500"}
voided_latency_run() { # name latency_ms mode(backfill|both)
    local name=$1 latency=$2 mode=$3 db="bench_voided_lat_$1" dir="$work/voided-lat-$1"
    # Served with its latency from the start: a second `storesim serve` of the same directory on another port could
    # leave storerecon.yaml naming the first one's port (seen on a loaded host: every token call refused).
    start_voided_simulator "$voided_latency_rows" "$db" "$dir" --quota-wall-clock true --latency "${latency}ms" \
        --latency-jitter "$(( latency / 10 ))ms"
    local since until
    since=$(date -u -d "@$(( $(date +%s) - 29 * 86400 ))" +%Y-%m-%dT%H:%M:%SZ)
    until=$(date -u -d "@$(( $(date +%s) - 120 ))" +%Y-%m-%dT%H:%M:%SZ)
    local half
    half=$(date -u -d "@$(( $(date +%s) - 15 * 86400 ))" +%Y-%m-%dT%H:%M:%SZ)
    # VOIDED_LOG_DIR=DIR keeps each run's debug log there (every store call's answer, with the ms since its grant,
    # and every voided page's slice): the timeline of a run.
    local logging=(--quiet) sync_log=/dev/null backfill_log=/dev/null
    if [ -n "${VOIDED_LOG_DIR:-}" ]; then
        mkdir -p "$VOIDED_LOG_DIR"
        logging=(--log-level debug)
        sync_log="$VOIDED_LOG_DIR/$name.sync.log"; backfill_log="$VOIDED_LOG_DIR/$name.backfill.log"
        : >"$sync_log"; : >"$backfill_log"
    fi
    start=$(now_ms)
    if [ "$mode" = backfill ]; then
        "$bin" backfill google-voided --since "$since" --until "$until" --config "$dir/storerecon.yaml" \
            "${logging[@]}" 2>>"$backfill_log"
    else
        "$bin" sync google-voided --config "$dir/storerecon.yaml" "${logging[@]}" 2>>"$sync_log" &
        local sync_pid=$! backfill_status=0
        "$bin" backfill google-voided --since "$since" --until "$half" --config "$dir/storerecon.yaml" \
            "${logging[@]}" 2>>"$backfill_log" || backfill_status=$?
        # The sync is waited for whatever the backfill did: never left running against stopped services.
        wait "$sync_pid"
        [ "$backfill_status" -eq 0 ] || return "$backfill_status"
    fi
    local took=$(( $(now_ms) - start ))
    local stats truth
    stats=$(curl -fsS "$sim_url/admin/stats")
    local low high
    low=$(( $(date -u -d "$since" +%s) * 1000 )); high=$(( $(date -u -d "$until" +%s) * 1000 ))
    truth=$(curl -fsS "$sim_url/admin/truth/refunds" | jq --argjson low "$low" --argjson high "$high" \
        '[.googleVoids[] | select(.recorded and .recordedTimeMillis >= $low and .recordedTimeMillis <= $high)] | length')
    stop_simulator
    local granted refused stored fastest ratio
    granted=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .granted] | add' <<<"$stats")
    refused=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .refused] | add' <<<"$stats")
    stored=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund")
    fastest=$(( (granted - 1) / 30 * 30000 ))
    ratio=$(python3 -c "print(round(min(1, $fastest / $took), 3) if $fastest > 0 else 1)")
    record "voided $name quota use at ${latency} ms ($granted calls)" "$took" "ms" "$ratio" ">=0.95" \
        "$(python3 -c "print('true' if $ratio >= 0.95 else 'false')")"
    # Where the time went: the quota span, from the first voided call granted to the last (the simulator's quota clock
    # follows the wall clock here), against the least the limit allows; and the fixed cost around it, from the start
    # to the first call (start-up, the access token) and from the last call to the exit (its answer, storing it, the
    # last Orders call).
    local first last span lead tail
    first=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .firstGrantMillis] | min' <<<"$stats")
    last=$(jq '[.endpoints[] | select(.endpoint == "googleVoidedPurchases") | .lastGrantMillis] | max' <<<"$stats")
    span=$(( last - first )); lead=$(( first - start )); tail=$(( start + took - last ))
    local span_ratio
    span_ratio=$(python3 -c "print(round(min(1, $fastest / $span), 3) if $fastest > 0 and $span > 0 else 1)")
    record "voided $name quota span at ${latency} ms" "$span" "ms" "$span_ratio" ">=0.95" \
        "$(python3 -c "print('true' if $span_ratio >= 0.95 else 'false')")"
    record "voided $name start to first call at ${latency} ms" "$lead" "ms" \
        "$(python3 -c "print(round($lead / $took, 3))")" "info" "true"
    record "voided $name last call to exit at ${latency} ms" "$tail" "ms" \
        "$(python3 -c "print(round($tail / $took, 3))")" "info" "true"
    record "voided $name refused at ${latency} ms" "$refused" "calls" "0" "0" \
        "$( [ "$refused" -eq 0 ] && echo true || echo false)"
    record "voided $name rows at ${latency} ms (truth $truth)" "$stored" "rows" "1" ">=truth" \
        "$( [ "$stored" -ge "$truth" ] && echo true || echo false)"
}
if [ "$voided_latency_rows" -gt 0 ]; then
    for latency in $voided_latencies; do
        log "Google voided: lone backfill of about $voided_latency_rows rows, answers after $latency ms"
        voided_latency_run "backfill_$latency" "$latency" backfill
        log "Google voided: sync and backfill at once, answers after $latency ms"
        voided_latency_run "sync_backfill_$latency" "$latency" both
    done
fi
