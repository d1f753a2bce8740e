# Sourced by scripts/bench: storerecon import subscriptions vs raw COPY. Uses $bin, $sim, $work, record, now_ms and the cluster (PGHOST).
# --- import: storerecon import subscriptions vs a raw COPY of the same file into the same table ---------------
log "generating $rows subscriptions"
python3 - "$rows" "$work/subs.csv" <<'PY'
import sys, random
n, path = int(sys.argv[1]), sys.argv[2]
random.seed(7)
with open(path, "w") as f:
    f.write("app,store_id,product_id,expires_at,user_ref\n")
    for i in range(n):
        day = 1 + i % 28
        f.write(f"bench-android,token-{i:09d}-{random.getrandbits(64):016x},premium.monthly,"
                f"2026-12-{day:02d}T{i % 24:02d}:00:00Z,user-{i}\n")
PY
for db in bench_import bench_copy; do "$PG_BIN/createdb" "$db"; done
cat >"$work/storerecon.yaml" <<YAML
database: { url: "host=$PGHOST port=$PGPORT user=postgres dbname=bench_import" }
apps:
  - { id: bench-android, platform: google, packageName: com.bench, serviceAccountFile: /nonexistent.json }
YAML
"$bin" migrate --config "$work/storerecon.yaml" --quiet
STORERECON_DATABASE_URL="host=$PGHOST port=$PGPORT user=postgres dbname=bench_copy" \
    "$bin" migrate --config "$work/storerecon.yaml" --quiet

start=$(now_ms)
psql -q -d bench_copy -c "\\copy subscription (app_id, store_id, product_id, expires_at, user_ref) FROM '$work/subs.csv' WITH (FORMAT csv, HEADER true)"
copy_ms=$(( $(now_ms) - start ))

start=$(now_ms)
"$bin" import subscriptions "$work/subs.csv" --config "$work/storerecon.yaml" --quiet
import_ms=$(( $(now_ms) - start ))

copy_rate=$(( rows * 1000 / copy_ms ))
import_rate=$(( rows * 1000 / import_ms ))
ratio=$(python3 -c "print(round($import_rate / $copy_rate, 3))")
pass=$(python3 -c "print('true' if $ratio >= 0.5 else 'false')")
record "raw COPY" "$copy_rate" "rows/s" "1" "reference" "true"
record "import subscriptions" "$import_rate" "rows/s" "$ratio" ">=0.5" "$pass"
record "import time ($rows rows)" "$import_ms" "ms" "$ratio" "<60000" "$(python3 -c "print('true' if $import_ms < 60000 else 'false')")"

