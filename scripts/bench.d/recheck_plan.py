#!/usr/bin/env python3
"""Reads `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` output on stdin and prints
`<rows read> <rows selected> <shared buffers hit+read> <execution ms>`.

Rows read are what the scans over the subscription table produced or threw away: for every Seq Scan, Index Scan,
Index Only Scan and Bitmap Heap Scan, actual rows x loops plus the rows removed by its filter and by an index
recheck (Bitmap Index Scans only pass row ids to their heap scan and are not counted twice). Rows selected are the
rows the query returned.
"""
import json
import sys

SCANS = {"Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan"}


def walk(node):
    read = 0
    if node.get("Node Type") in SCANS and node.get("Relation Name") == "subscription":
        loops = node.get("Actual Loops", 1)
        read += node.get("Actual Rows", 0) * loops
        read += node.get("Rows Removed by Filter", 0) + node.get("Rows Removed by Index Recheck", 0)
    for child in node.get("Plans", []):
        read += walk(child)
    return read


explained = json.load(sys.stdin)[0]
plan = explained["Plan"]
buffers = plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
print(walk(plan), plan["Actual Rows"] * plan.get("Actual Loops", 1), buffers, explained["Execution Time"])
