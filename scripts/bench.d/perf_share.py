#!/usr/bin/env python3
"""Reads `perf script -F comm,period,ip,sym` output of a `perf record -g` run on stdin and prints
`<cpu seconds> <seconds under MARKER> <seconds under MARKER and DECODE>`: the CPU time of every sample whose call
stack holds a frame whose (mangled) symbol contains MARKER, and of those, the ones with a frame containing DECODE.
Usage: perf script ... | perf_share.py MARKER DECODE
"""
import sys

marker, decode = sys.argv[1], sys.argv[2]
total = marked = decoding = 0
period = 0
frames = []


def flush():
    global total, marked, decoding
    if period:
        total += period
        if any(marker in frame for frame in frames):
            marked += period
            if any(decode in frame for frame in frames):
                decoding += period


for line in sys.stdin:
    if not line.strip():
        continue
    if line[0] not in " \t":
        flush()
        frames = []
        fields = line.split()
        period = next((int(field) for field in reversed(fields) if field.isdigit()), 0)
    else:
        frames.append(line)
flush()
# cpu-clock periods are nanoseconds.
print(f"{total / 1e9:.3f} {marked / 1e9:.3f} {decoding / 1e9:.3f}")
