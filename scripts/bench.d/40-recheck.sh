# Sourced by scripts/bench: recheck selection on a large table, and recheck calls per night against the simulator.
# Uses $bin, $sim, $work, record, now_ms, stop_simulator and the cluster (PGHOST).
# Environment: SELECTION_ROWS=10000000 (subscriptions for the selection figure; 0 skips it),
# NIGHT_SUBSCRIPTIONS=200000 (scenario size for calls per night; 0 skips it), NIGHTS=7.
selection_rows=${SELECTION_ROWS:-10000000}
night_subscriptions=${NIGHT_SUBSCRIPTIONS:-200000}
nights=${NIGHTS:-7}
here_recheck=scripts/bench.d
source scripts/bench.d/simulator.bash

# --- selection: the recheck's due query (RecheckPlanner.dueSQL, read from the source) on SELECTION_ROWS rows ------
if [ "$selection_rows" -gt 0 ]; then
    db=bench_selection
    "$PG_BIN/createdb" "$db"
    cat >"$work/selection.yaml" <<YAML
database: { url: "host=$PGHOST port=$PGPORT user=postgres dbname=$db" }
apps:
  - { id: bench-ios, platform: apple, bundleId: com.bench, environment: sandbox, issuerId: i, keyId: k, privateKeyFile: /nonexistent.p8,
      rootCertificates: [/nonexistent.der] }
YAML
    "$bin" migrate --config "$work/selection.yaml" --quiet
    psql -q -d "$db" -c "INSERT INTO app (id, platform, store_app_id) VALUES ('bench-ios', 'apple', 'com.bench') ON CONFLICT DO NOTHING"
    log "selection: generating $selection_rows subscriptions"
    # The table as the nightly recheck leaves it, the night before a run at :'t' (runs are a day apart, lead 72 h,
    # lag 24 h). Shares: 40 % renewing and 4 % cancelled but not yet expired (half monthly, half yearly; expiries
    # spread over the coming period; each was checked at its last renewal and, once its expiry came within the lead,
    # again on that night); 1 % in a watched state (grace, billing retry, on hold, paused, pending; checked last
    # night); 0.2 % new since last night, never checked; the rest ended (expired over the last two years, checked
    # after their expiry; some revoked, replaced or missing); 1 in 2000 flagged by a refund job since its last check.
    # night(x) is the first nightly run at or after x.
    start=$(now_ms)
    psql -q -v ON_ERROR_STOP=1 -d "$db" -v rows="$selection_rows" -v t="2026-07-01 02:00:00+00" <<'SQL'
CREATE FUNCTION pg_temp.night(x timestamptz, t timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE
    AS $$ SELECT t - floor(extract(epoch FROM t - x) / 86400) * interval '1 day' $$;
CREATE FUNCTION pg_temp.unit(i bigint, salt bigint) RETURNS float8 LANGUAGE sql IMMUTABLE
    AS $$ SELECT (hashint8extended(i, salt) & 2147483647)::float8 / 2147483648 $$;
INSERT INTO subscription (app_id, store_id, product_id, state, store_state, entitled, expires_at, auto_renew,
                          environment, expiry_changed_at, last_checked_at, flagged_at, flag_reason, created_at,
                          updated_at)
SELECT 'bench-ios', (2000000000000000 + i)::text, p.product,
       k.state, CASE WHEN k.state = 'unknown' THEN NULL ELSE '1' END, k.state IN ('active', 'canceled', 'grace'),
       e.expires, k.state = 'active', 'Production', e.changed, e.checked,
       CASE WHEN i % 2000 = 0 THEN :'t'::timestamptz - interval '2 hours' END,
       CASE WHEN i % 2000 = 0 THEN 'refund' END, e.changed, e.changed
FROM generate_series(1, :rows) AS i
CROSS JOIN LATERAL (SELECT pg_temp.unit(i, 1) AS r1, pg_temp.unit(i, 2) AS r2, pg_temp.unit(i, 3) AS r3) AS u
CROSS JOIN LATERAL (
    SELECT CASE WHEN u.r2 < 0.5 THEN 'monthly' ELSE 'yearly' END AS product,
           CASE WHEN u.r2 < 0.5 THEN interval '30 days' ELSE interval '365 days' END AS period) AS p
CROSS JOIN LATERAL (
    SELECT CASE WHEN u.r1 < 0.40 THEN 'active' WHEN u.r1 < 0.44 THEN 'canceled'
                WHEN u.r1 < 0.45 THEN (ARRAY['grace', 'billing_retry', 'on_hold', 'paused', 'pending'])[1 + i % 5]
                WHEN u.r1 < 0.452 THEN 'unknown'
                WHEN u.r1 < 0.99 THEN 'expired'
                ELSE (ARRAY['revoked', 'replaced', 'missing'])[1 + i % 3] END AS state) AS k
CROSS JOIN LATERAL (
    SELECT CASE WHEN k.state IN ('active', 'canceled', 'unknown')
                     THEN :'t'::timestamptz - interval '1 day' + u.r3 * p.period
                WHEN k.state IN ('grace', 'billing_retry', 'on_hold', 'paused', 'pending')
                     THEN :'t'::timestamptz - u.r3 * interval '30 days'
                ELSE :'t'::timestamptz - interval '1 day' - u.r3 * interval '730 days' END AS expires) AS x
CROSS JOIN LATERAL (
    SELECT x.expires,
           CASE WHEN k.state = 'unknown' THEN :'t'::timestamptz - u.r2 * interval '1 day'
                ELSE pg_temp.night(x.expires - p.period, :'t') END AS changed,
           CASE WHEN k.state = 'unknown' THEN NULL
                WHEN k.state IN ('active', 'canceled') AND x.expires <= :'t'::timestamptz + interval '2 days'
                     THEN pg_temp.night(x.expires - interval '72 hours', :'t')
                WHEN k.state IN ('active', 'canceled') THEN pg_temp.night(x.expires - p.period, :'t')
                WHEN k.state IN ('grace', 'billing_retry', 'on_hold', 'paused', 'pending')
                     THEN :'t'::timestamptz - interval '1 day'
                ELSE pg_temp.night(x.expires, :'t') END AS checked) AS e;
VACUUM ANALYZE subscription;
SQL
    log "selection: $selection_rows rows generated and vacuumed in $(( ($(now_ms) - start) / 1000 )) s"

    due_sql=$(sed -n '/static let dueSQL = """/,/^        """$/p' Sources/Reconciler/Recheck/RecheckPlanner.swift | sed '1d;$d')
    grep -q "FROM subscription" <<<"$due_sql" || { log "cannot read RecheckPlanner.dueSQL"; exit 1; }
    # The job's parameters for a run at t with lead 72 h, lag 24 h and the 12-hour watch interval. Parameters go
    # untyped, as libpq sends them, and each run plans with its values (the job's unnamed statements do).
    execute="EXECUTE due('bench-ios', timestamptz '2026-06-30 02:00:00+00', timestamptz '2026-07-04 02:00:00+00',
        timestamptz '2026-07-01 02:00:00+00', 259200, timestamptz '2026-06-30 14:00:00+00')"
    prepare="SET plan_cache_mode = force_custom_plan; PREPARE due AS $due_sql;"
    # Warm once, then the median of five timed runs (the client receives every row, as the job does).
    psql -q -d "$db" >/dev/null <<SQL
$prepare
$execute;
SQL
    timings=$(psql -q -d "$db" <<SQL | awk '/^Time:/ { print $2 }'
$prepare
\\timing on
\\o /dev/null
$execute;
$execute;
$execute;
$execute;
$execute;
SQL
)
    selection_ms=$(sort -n <<<"$timings" | sed -n 3p)
    # The floor to compare with: the same rows read by primary key (ids known in advance), same columns and order.
    reference_timings=$(psql -q -d "$db" <<SQL | awk '/^Time:/ { print $2 }'
$prepare
CREATE TEMP TABLE due_ids AS $execute;
SELECT array_agg(id ORDER BY id) AS ids FROM due_ids \\gset
\\timing on
\\o /dev/null
SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us FROM subscription
    WHERE id = ANY (:'ids'::bigint[]) ORDER BY id;
SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us FROM subscription
    WHERE id = ANY (:'ids'::bigint[]) ORDER BY id;
SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us FROM subscription
    WHERE id = ANY (:'ids'::bigint[]) ORDER BY id;
SQL
)
    reference_ms=$(sort -n <<<"$reference_timings" | sed -n 2p)
    # The floor of any listing: the same rows returned from a table holding only them (no index, no filter), i.e.
    # what moving them from the server into psql costs. The due query returns a row once per part it is in (the job
    # drops the repeats), so the rows selected are the distinct ids.
    floor_timings=$(psql -q -d "$db" <<SQL | awk '/^Time:/ { print $2 }'
$prepare
CREATE TEMP TABLE due_all AS $execute;
CREATE TEMP TABLE due_rows AS SELECT DISTINCT * FROM due_all;
VACUUM ANALYZE due_rows;
\\timing on
\\o /dev/null
SELECT * FROM due_rows;
SELECT * FROM due_rows;
SELECT * FROM due_rows;
SQL
)
    floor_ms=$(sort -n <<<"$floor_timings" | sed -n 2p)
    read -r rows_read rows_selected buffers exec_ms < <(psql -Atq -d "$db" <<SQL | python3 "$here_recheck/recheck_plan.py"
$prepare
EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) $execute;
SQL
)
    psql -q -d "$db" <<SQL >"$work/selection.plan"
$prepare
EXPLAIN (ANALYZE, BUFFERS) $execute;
SQL
    log "selection plan ($rows_selected of $selection_rows selected, $rows_read rows read, $buffers buffers):"
    sed 's/^/    /' "$work/selection.plan" >&2
    rows_selected=$(psql -Atq -d "$db" <<SQL | tail -1
$prepare
CREATE TEMP TABLE due_all AS $execute;
SELECT count(DISTINCT id) FROM due_all;
SQL
)
    read_ratio=$(python3 -c "print(round($rows_read / max(1, $rows_selected), 3))")
    record "return the due rows alone" "$floor_ms" "ms" "1" "floor" "true"
    record "read the due rows by id" "$reference_ms" "ms" "1" "reference" "true"
    record "recheck selection ($rows_selected of $selection_rows)" "$selection_ms" "ms" \
        "$(python3 -c "print(round($selection_ms / $floor_ms, 3))")" "<100" \
        "$(python3 -c "print('true' if $selection_ms < 100 else 'false')")"
    record "recheck rows read / selected" "$read_ratio" "rows" "$read_ratio" "<=2" \
        "$(python3 -c "print('true' if $read_ratio <= 2 else 'false')")"
    "$PG_BIN/dropdb" "$db"
fi

# --- calls per night: status calls / subscriptions over a simulated week ---------------------------------------
# The recheck asks about a renewing subscription twice a period: once when its expiry comes within the lead (72 h:
# auto-renew off? a downgrade scheduled?) and once on the night after it passed (renewed or lapsed?); ended ones
# never; watched states (grace, billing retry, on hold, paused) every night. So a subscription costs about
# 2 / period-in-days calls a night while it lives. One monthly product among three (the other two yearly; three
# tiers so that upgrades and downgrades happen) puts about 2 % of the subscriptions near expiry each night: monthly
# 2/30 x a third x the share still alive, yearly 2/365 x the rest, and the watched states a little more (measured
# on 20,000 subscriptions: one monthly among four products gave 1.7 % a night, two among five 2.4 %). "Near expiry tonight" is counted from the stored expiries before each run: expiry passed since the last
# night, or entering the lead window since then. The scenario is the app backend's export at the anchor
# (subscriptions.csv, imported once); storesim serve's clock moves a day per night (POST /admin/clock) and
# storerecon runs under faketime at the same offset, so both see the same night. Limits are lifted: this counts
# calls, not their pace. Night 0 is the first recheck of freshly imported rows and is not counted.
if [ "$night_subscriptions" -gt 0 ]; then
    ensure_packages faketime
    db=bench_nights
    dir="$work/nights"
    log "recheck nights: $night_subscriptions subscriptions, $nights nights"
    cat >"$dir.spec.json" <<JSON
{"seed": 41, "anchorMillis": $(( $(date +%s) * 1000 )), "subscriptions": $night_subscriptions,
 "oneTimePurchases": 0, "refunds": $(( night_subscriptions / 100 )), "historyDays": 400,
 "futureDays": $(( nights + 14 )), "sandboxShare": 0,
 "apps": [{"id": "bench-ios", "platform": "apple", "storeId": "com.bench.nights", "appAppleId": 1234567890},
          {"id": "bench-android", "platform": "google", "storeId": "com.bench.nights"}],
 "products": [
  {"productId": "bench.basic.monthly", "kind": "subscription", "periodDays": 30, "tier": 1, "priceMilli": 4990, "currency": "USD", "group": "1"},
  {"productId": "bench.plus.yearly", "kind": "subscription", "periodDays": 365, "tier": 2, "priceMilli": 59990, "currency": "USD", "group": "1"},
  {"productId": "bench.pro.yearly", "kind": "subscription", "periodDays": 365, "tier": 3, "priceMilli": 99990, "currency": "EUR", "group": "1"}]}
JSON
    start_bench_simulator "$dir.spec.json" "$db" "$dir"
    curl -fsS -X POST "$sim_url/admin/quotas" \
        -d '{"appleOtherPerSecond": 100000000, "subscriptionsPerMinute": 100000000}' >/dev/null
    cat >>"$dir/storerecon.yaml" <<'YAML'
limits:
  bench-ios: { subscriptionStatusPerSecond: 100000 }
  bench-android: { subscriptionsPerMinute: 100000000 }
YAML
    "$bin" import subscriptions "$dir/subscriptions.csv" --config "$dir/storerecon.yaml" --quiet
    subscriptions=$(psql -Atq -d "$db" -c "SELECT count(*) FROM subscription")
    offset=0
    week_calls=0
    week_near=0
    for night in $(seq 0 "$nights"); do
        if [ "$night" -gt 0 ]; then
            curl -fsS -X POST "$sim_url/admin/clock" -d '{"advanceSeconds": 86400}' >/dev/null
            offset=$(( offset + 86400 ))
        fi
        curl -fsS -X POST "$sim_url/admin/stats/reset" >/dev/null
        sim_now=$(curl -fsS "$sim_url/admin/clock" | jq '.nowMillis / 1000 | floor')
        near=$(psql -Atq -d "$db" -c "
            SELECT count(*) FROM subscription, LATERAL (SELECT to_timestamp($sim_now) AS now) n
            WHERE expires_at > now - interval '1 day' AND expires_at <= now
               OR expires_at > now + interval '2 days' AND expires_at <= now + interval '3 days'")
        faketime -f "+${offset}s" "$bin" recheck --config "$dir/storerecon.yaml" --quiet ||
            log "recheck night $night exited $?"
        calls=$(( $(simulator_granted appleSubscriptionStatuses) + $(simulator_granted googleSubscriptionsV2) ))
        log "recheck night $night: $calls status calls, $near near expiry, of $subscriptions subscriptions"
        if [ "$night" -gt 0 ]; then
            week_calls=$(( week_calls + calls ))
            week_near=$(( week_near + near ))
        fi
    done
    stop_simulator
    per_night=$(python3 -c "print(round($week_calls / $nights / $subscriptions, 4))")
    # ratio: calls over the subscriptions near expiry (1 = exactly those were asked, plus the watched states).
    record "recheck calls per night / subs" "$per_night" "calls" \
        "$(python3 -c "print(round($week_calls / max(1, $week_near), 3))")" "~0.02" \
        "$(holds "0.015 <= $per_night <= 0.025")"
fi
