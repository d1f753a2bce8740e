# Sourced by scripts/bench: `report refunds --detail` streamed in every format over REPORT_ROWS refunds (default
# 1,000,000): peak memory (max RSS of the process, target <= 100 MB whatever the size) and seconds. Uses $bin, $work,
# record and the cluster (PGHOST).
report_rows=${REPORT_ROWS:-1000000}
"$PG_BIN/createdb" bench_report
cat >"$work/report.yaml" <<YAML
database: { url: "host=$PGHOST port=$PGPORT user=postgres dbname=bench_report" }
apps:
  - { id: bench-android, platform: google, packageName: com.bench, serviceAccountFile: /nonexistent.json }
YAML
"$bin" migrate --config "$work/report.yaml" --quiet
log "generating $report_rows refunds"
# A year of refunds, Apple and Google, five currencies, one in 50 reversed a week later, one in 200 without amount.
psql -q -d bench_report <<SQL
INSERT INTO app (id, platform, store_app_id) VALUES ('bench-ios', 'apple', 'com.bench') ON CONFLICT DO NOTHING;
INSERT INTO refund (app_id, platform, order_id, original_id, product_id, refunded_at, recorded_at, reason_label,
                    refund_type, quantity, price_milli, gross_amount, tax_amount, amount_precision, amount_source,
                    currency, buyer_country, reversed_at, environment, payload)
SELECT CASE WHEN n % 2 = 0 THEN 'bench-ios' ELSE 'bench-android' END,
       CASE WHEN n % 2 = 0 THEN 'apple' ELSE 'google' END,
       'order-' || n, 'original-' || n, 'premium.monthly',
       '2025-01-01T00:00:00Z'::timestamptz + n * interval '31 seconds',
       '2025-01-01T06:00:00Z'::timestamptz + n * interval '31 seconds', 'customer_support', 'full', 1,
       CASE WHEN n % 2 = 0 THEN 9990 END,
       CASE WHEN n % 200 <> 0 THEN CASE WHEN n % 2 = 0 THEN 9990 ELSE 9990000000 END END,
       CASE WHEN n % 200 <> 0 AND n % 2 = 1 THEN 1594000000 END,
       CASE WHEN n % 200 <> 0 THEN CASE WHEN n % 2 = 0 THEN 3 ELSE 9 END END,
       CASE WHEN n % 200 <> 0 THEN 'store' END,
       (ARRAY['USD', 'EUR', 'JPY', 'GBP', 'BRL'])[1 + n % 5], 'DE',
       CASE WHEN n % 50 = 0 THEN '2025-01-08T00:00:00Z'::timestamptz + n * interval '31 seconds' END,
       CASE WHEN n % 2 = 0 THEN 'Production' END, '{}'
FROM generate_series(1, $report_rows) AS n;
ANALYZE refund;
SQL
for format in json csv html table; do
    start=$(now_ms)
    /usr/bin/time -f "%M" -o "$work/report.rss" "$bin" report refunds --config "$work/report.yaml" --quiet \
        --from 2025-01-01 --to 2026-12-31 --detail --format "$format" --output "$work/report.$format"
    report_ms=$(( $(now_ms) - start ))
    rss_mb=$(( $(tail -1 "$work/report.rss") / 1024 ))
    lines=$(wc -l <"$work/report.$format")
    rm -f "$work/report.$format"
    record "report detail $format peak" "$rss_mb" "MB" "$(python3 -c "print(round($rss_mb / 100, 3))")" "<=100" \
        "$(python3 -c "print('true' if $rss_mb <= 100 else 'false')")"
    record "report detail $format time" "$report_ms" "ms" "1" "$report_rows rows, $lines lines" "true"
done
