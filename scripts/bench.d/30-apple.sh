# Sourced by scripts/bench: Apple refunds, quota use and verification rate. Uses $bin, $sim, $work, record, now_ms,
# stop_simulator and the cluster (PGHOST).
# Environment: APPLE_QUOTA_CUSTOMERS=1000 (customers read under the published Refund History limit; 0 skips it),
# APPLE_VERIFY_REFUNDS=10000 (refunds synced with limits lifted; 0 skips the verify figure),
# APPLE_PY_PAYLOADS=10000 (payloads the official Python library verifies, and storerecon's verify stage after it).
source scripts/bench.d/simulator.bash
apple_quota_customers=${APPLE_QUOTA_CUSTOMERS:-1000}
apple_verify_refunds=${APPLE_VERIFY_REFUNDS:-10000}
apple_py_payloads=${APPLE_PY_PAYLOADS:-10000}

# One Apple production app (no sandbox purchases: the sandbox has a tenth of the limits and its own counts).
apple_spec() { # seed subscriptions refunds max-refunds-per-purchase
    printf '{"seed": %s, "anchorMillis": %s, "subscriptions": %s, "oneTimePurchases": %s, "refunds": %s,
 "maxRefundsPerPurchase": %s, "historyDays": 150, "futureDays": 0, "sandboxShare": 0,
 "apps": [{"id": "bench-ios", "platform": "apple", "storeId": "com.bench.refunds", "appAppleId": 1234567890}]}\n' \
        "$1" "$(( $(date +%s) * 1000 ))" "$2" "$(( $2 / 5 ))" "$3" "$4"
}

# --- quota use: Refund History at its published 10 per second, four storerecon processes started together -------
# Every known customer is queued (backfill --all) and read once. Two `sync apple-refunds` and two `backfill
# apple-refunds --all` start at once on one database; each job holds its advisory lock (one writer per job and app),
# so one of each works and the other two skip, and the two at work split the customers (FOR UPDATE SKIP LOCKED).
# While they run, /admin/stats is sampled every 50 ms: the work lasts from the first Refund History grant to the
# last (each end taken midway between the samples around it). In a span of T seconds "10 in any 1 s" allows at most
# 10 x (floor(T) + 1) calls; the ratio is the calls granted over that.
if [ "$apple_quota_customers" -gt 0 ]; then
    db=bench_apple_quota
    dir="$work/apple-quota"
    log "Apple quota: $apple_quota_customers customers, Refund History at the published 10 per second"
    apple_spec 31 "$apple_quota_customers" "$(( apple_quota_customers / 5 ))" 1 >"$dir.spec.json"
    start_bench_simulator "$dir.spec.json" "$db" "$dir"
    # No sweep: each customer is read once (a sweep re-reads customers the backfill has just read).
    printf 'sync: { appleSweepCustomers: 0 }\n' >>"$dir/storerecon.yaml"
    "$bin" import subscriptions "$dir/subscriptions.csv" --config "$dir/storerecon.yaml" --quiet
    (while :; do echo "$(now_ms) $(simulator_granted appleRefundHistory)"; sleep 0.05; done) >"$dir.samples" &
    poll_pid=$!
    pids=()
    for worker in 1 2 3 4; do
        if [ $(( worker % 2 )) -eq 1 ]; then job=(sync apple-refunds); else job=(backfill apple-refunds --all); fi
        "$bin" "${job[@]}" --config "$dir/storerecon.yaml" >"$dir.worker$worker.log" 2>&1 &
        pids+=($!)
    done
    failed=0
    for pid in "${pids[@]}"; do wait "$pid" || failed=$(( failed + 1 )); done
    sleep 0.2
    kill "$poll_pid"; wait "$poll_pid" 2>/dev/null || true
    stats=$(curl -fsS "$sim_url/admin/stats")
    limit=$(curl -fsS "$sim_url/admin/quotas" | jq '.appleRefundHistoryPerSecond * .appleWindowSeconds | round')
    stop_simulator
    skipped=$(grep -l "skipped: another process holds" "$dir".worker*.log | wc -l)
    [ "$failed" -eq 0 ] || { log "Apple quota: $failed workers failed"; tail -n 3 "$dir".worker*.log >&2; }
    granted=$(jq '[.endpoints[] | select(.endpoint == "appleRefundHistory") | .granted] | add' <<<"$stats")
    refused=$(jq '[.endpoints[] | select(.endpoint == "appleRefundHistory") | .refused] | add' <<<"$stats")
    most=$(jq '[.endpoints[] | select(.endpoint == "appleRefundHistory") | .maxInAnySecond] | max' <<<"$stats")
    read -r span_ms allowed < <(python3 - "$dir.samples" "$granted" "$limit" <<'PY'
import sys
samples = [tuple(map(int, line.split())) for line in open(sys.argv[1]) if len(line.split()) == 2]
granted, limit = int(sys.argv[2]), int(sys.argv[3])
first = next(i for i, (_, n) in enumerate(samples) if n > 0)
last = next(i for i, (_, n) in enumerate(samples) if n >= granted)
start = (samples[max(first - 1, 0)][0] + samples[first][0]) / 2
end = (samples[max(last - 1, 0)][0] + samples[last][0]) / 2
span = end - start
print(round(span), limit * (int(span // 1000) + 1))
PY
)
    ratio=$(python3 -c "print(round($granted / $allowed, 3))")
    log "Apple quota: $granted calls in $span_ms ms by $(( 4 - skipped )) working processes ($skipped skipped: job lock)"
    record "apple quota use ($granted calls)" "$span_ms" "ms" "$ratio" ">=0.95" "$(holds "$ratio >= 0.95")"
    record "apple refused by the store" "$refused" "calls" "0" "0" "$(holds "$refused == 0")"
    record "apple most in any 1 s" "$most" "calls" "$(python3 -c "print(round($most / $limit, 3))")" "<=$limit" \
        "$(holds "$most <= $limit")"
fi

# --- verify: signed refunds verified, decoded and stored per second, vs Apple's official Python library ----------
# The figure: the same signed refund transactions, verified and decoded by both, and stored by storerecon. The
# reference is app-store-server-library's SignedDataVerifier (enable_online_checks=False, which also turns its chain
# cache off) verifying and decoding refund payloads it fetched from the simulator (fetching untimed), which it saves;
# storerecon's `verify-probe` then takes the saved file through the sync's own page path (every JWS verified against
# the simulator's root, decoded, each page of 20 stored in one transaction with its cursor update, on
# sync.appleConcurrency readers) into an empty database, timed from connecting to the last commit. Neither side
# fetches in the timed part: in production the fetching is paced by Apple's quota, not by either library.
# Reported beside it, not as the figure: the whole `sync apple-refunds` (discovery through Notification History,
# then each refunded customer's Refund History over loopback HTTP) with the limits lifted on both sides, timed from
# start to exit, divided into the refunds stored; under `perf record` (when perf is there), the CPU time spent inside
# SignedPayloadVerifier over the sync's wall time is the share of the time spent verifying.
if [ "$apple_verify_refunds" -gt 0 ]; then
    db=bench_apple_verify
    dir="$work/apple-verify"
    log "Apple verify: syncing $apple_verify_refunds refunds with limits lifted"
    apple_spec 32 "$(( apple_verify_refunds * 2 ))" "$apple_verify_refunds" 3 >"$dir.spec.json"
    start_bench_simulator "$dir.spec.json" "$db" "$dir"
    curl -fsS -X POST "$sim_url/admin/quotas" \
        -d '{"appleRefundHistoryPerSecond": 100000000, "appleOtherPerSecond": 100000000}' >/dev/null
    cat >>"$dir/storerecon.yaml" <<'YAML'
limits:
  bench-ios: { refundHistoryPerSecond: 100000, notificationHistoryPerSecond: 100000 }
sync: { appleSweepCustomers: 0 }
YAML
    profile=()
    if command -v perf >/dev/null && perf record -q -o /dev/null -- true 2>/dev/null; then
        profile=(perf record -q -F 499 -g -o "$dir.perf" --)
    fi
    start=$(now_ms)
    "${profile[@]}" "$bin" sync apple-refunds --config "$dir/storerecon.yaml" --quiet
    sync_ms=$(( $(now_ms) - start ))
    stored=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund WHERE platform = 'apple'")
    sync_rate=$(( stored * 1000 / sync_ms ))

    log "Apple verify: app-store-server-library in a venv"
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q --disable-pip-version-check "app-store-server-library>=3.1.2" requests
    python_result=$("$work/venv/bin/python" scripts/bench.d/apple_verify.py --dir "$dir" --url "$sim_url" \
        --payloads "$apple_py_payloads" --save "$dir.payloads")
    stop_simulator
    python_rate=$(jq '.rate | floor' <<<"$python_result")

    log "Apple verify: storerecon's verify stage on the same $(wc -l <"$dir.payloads") payloads"
    sed "s/dbname=$db/dbname=bench_apple_stage/" "$dir/storerecon.yaml" >"$dir.stage.yaml"
    "$PG_BIN/createdb" bench_apple_stage
    "$bin" migrate --config "$dir.stage.yaml" --quiet
    stage_result=$("$probe" --config "$dir.stage.yaml" --app bench-ios --payloads "$dir.payloads")
    stage_rate=$(jq '.rate | floor' <<<"$stage_result")
    stage_rows=$(psql -Atq -d bench_apple_stage -c "SELECT count(*) FROM refund WHERE platform = 'apple'")
    [ "$stage_rows" -eq "$(jq .payloads <<<"$stage_result")" ] ||
        { log "Apple verify: $stage_rows refunds stored of $(jq .payloads <<<"$stage_result") payloads"; exit 1; }
    ratio=$(python3 -c "print(round($stage_rate / $python_rate, 3))")
    record "python SignedDataVerifier" "$python_rate" "JWS/s" "1" "reference" "true"
    record "apple verify+store ($stage_rows)" "$stage_rate" "refunds/s" "$ratio" ">=3" "$(holds "$ratio >= 3")"
    sync_ratio=$(python3 -c "print(round($sync_rate / $python_rate, 3))")
    record "apple sync ($stored refunds)" "$sync_rate" "refunds/s" "$sync_ratio" "report" "true"
    if [ -s "$dir.perf" ]; then
        read -r cpu_s verify_s decode_s < <(perf script -i "$dir.perf" -F comm,period,ip,sym 2>/dev/null |
            python3 scripts/bench.d/perf_share.py SignedPayloadVerifier JSONDecoder)
        share=$(python3 -c "print(round($verify_s * 1000 / $sync_ms, 3))")
        log "Apple verify: sync $sync_ms ms wall, $cpu_s s CPU, $verify_s s verifying (of which $decode_s s JSON)"
        record "apple verification share" "$share" "of time" "$share" "report" "true"
    fi
fi
