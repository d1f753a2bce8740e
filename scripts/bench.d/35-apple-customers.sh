# Sourced by scripts/bench: Apple Refund History calls per customer, first night and a rerun the same night (issue 20).
# Uses $bin, $sim, $work, record, log, stop_simulator and the cluster (PGHOST).
# Environment: APPLE_CUSTOMERS=300 (customers of three subscriptions each; 0 skips it), APPLE_CUSTOMER_LATENCIES="0 1500"
# (ms every store answer is held, storesim --latency, with a tenth of it as jitter).
#
# Each customer has three subscriptions of one app (scenario appleCustomerPlans: 3): Get Refund History asked with any
# of them answers for all three, their signed transactions share an appTransactionId, and the backend export names
# them by one user_ref. The subscriptions are imported, then `sync apple-refunds` runs with a sweep large enough for
# every customer, then again at once (the same night). The least possible calls: one chain per known customer, one
# call per 20 refunds (at least one), from the simulator's ground truth. Figures: calls per refunded customer and per
# known customer; the first run's ratio is its calls over the least possible (target <= 1.2), the rerun's its calls
# over the first run's (target <= 0.1). The ledger must equal the store's truth after both.
source scripts/bench.d/simulator.bash
apple_customers=${APPLE_CUSTOMERS:-300}
apple_customer_latencies=${APPLE_CUSTOMER_LATENCIES:-"0 1500"}

if [ "$apple_customers" -gt 0 ]; then
    for latency in $apple_customer_latencies; do
        db="bench_apple_customers_$latency"
        dir="$work/apple-customers-$latency"
        log "Apple customers: $apple_customers customers x 3 subscriptions, answers held ${latency} ms"
        printf '{"seed": 35, "anchorMillis": %s, "subscriptions": %s, "oneTimePurchases": 0, "refunds": %s,
 "maxRefundsPerPurchase": 3, "appleCustomerPlans": 3, "historyDays": 150, "futureDays": 0, "sandboxShare": 0,
 "apps": [{"id": "bench-ios", "platform": "apple", "storeId": "com.bench.refunds", "appAppleId": 1234567890}]}\n' \
            "$(( $(date +%s) * 1000 ))" "$(( apple_customers * 3 ))" "$(( apple_customers / 2 ))" >"$dir.spec.json"
        "$sim" init --dir "$dir" --scenario "$dir.spec.json" --clock wall --no-financial-reports \
            --database-url "host=$PGHOST port=$PGPORT user=postgres dbname=$db" >/dev/null
        "$sim" serve --dir "$dir" --port 0 --quota-wall-clock true --latency "${latency}ms" --latency-jitter "$(( latency / 10 ))ms" \
            >"$dir.url" 2>"$dir.log" &
        sim_pid=$!
        for _ in $(seq 600); do [ -s "$dir.url" ] && break; sleep 0.1; done
        sim_url=$(head -1 "$dir.url")
        [ -n "$sim_url" ] || { cat "$dir.log" >&2; exit 1; }
        "$PG_BIN/createdb" "$db"
        "$bin" migrate --config "$dir/storerecon.yaml" --quiet
        printf 'sync: { appleSweepCustomers: 100000 }\n' >>"$dir/storerecon.yaml"
        "$bin" import subscriptions "$dir/subscriptions.csv" --config "$dir/storerecon.yaml" --quiet
        curl -fsS "$sim_url/admin/truth/refunds" >"$dir.truth.json"
        read -r known refunded least truth_refunds < <(python3 - "$dir.truth.json" "$dir/subscriptions.csv" <<'PY'
import csv, json, sys
truth = json.load(open(sys.argv[1]))
# One app: purchase i is plan i; customers are three consecutive plans, named by their first (user-<first plan>).
def customer(original):
    return ((int(original) - 2_000_000_000_000_000) // 1000) // 3 * 3
refunds = {}
live = [r for r in truth["appleRefunds"] if r["revocationDate"] <= truth["nowMillis"]]
for r in live:
    refunds[customer(r["originalTransactionId"])] = refunds.get(customer(r["originalTransactionId"]), 0) + 1
known = {customer(row["store_id"]) for row in csv.DictReader(open(sys.argv[2]))} | set(refunds)
least = sum(max(1, (refunds.get(c, 0) + 19) // 20) for c in known)
print(len(known), len(refunds), least, len(live))
PY
)
        "$bin" sync apple-refunds --config "$dir/storerecon.yaml" --quiet
        first=$(simulator_granted appleRefundHistory)
        "$bin" sync apple-refunds --config "$dir/storerecon.yaml" --quiet
        rerun=$(( $(simulator_granted appleRefundHistory) - first ))
        stop_simulator
        stored=$(psql -Atq -d "$db" -c "SELECT count(*) FROM refund WHERE platform = 'apple'")
        [ "$stored" -eq "$truth_refunds" ] || log "Apple customers: ledger holds $stored refunds, the store $truth_refunds"
        log "Apple customers (${latency} ms): first run $first Refund History calls (least $least for $known known" \
            "customers, $refunded refunded), rerun $rerun"
        ratio=$(python3 -c "print(round($first / $least, 3))")
        record "apple calls/refunded cust ${latency}ms" "$(python3 -c "print(round($first / $refunded, 3))")" \
            "calls" "$ratio" "<=1.2" "$(holds "$ratio <= 1.2 and $stored == $truth_refunds")"
        record "apple calls/known cust ${latency}ms" "$(python3 -c "print(round($first / $known, 3))")" \
            "calls" "$ratio" "<=1.2" "$(holds "$ratio <= 1.2")"
        rerun_ratio=$(python3 -c "print(round($rerun / $first, 3))")
        record "apple rerun calls/known ${latency}ms" "$(python3 -c "print(round($rerun / $known, 3))")" \
            "calls" "$rerun_ratio" "<=0.1" "$(holds "$rerun_ratio <= 0.1 and $stored == $truth_refunds")"
    done
fi
