#!/usr/bin/env python3
"""bigresults.py N OUT — write a results file (JSON Lines, as `cnperf run --results` writes it)
with one run of N results, each a loopback TCP_STREAM case with one sample and its summary
(about 620 bytes a line). It is the input of the memory measurement in docs/reporting.md
("Limits"): N = 1000000 gives a 621 MB file.

The figures vary a little per line so that nothing is shared between results."""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
uuid = "b16b16b1-0000-4000-8000-000000000000"
with open(out, "w") as f:
    f.write(json.dumps({"type": "run", "run": {
        "apiVersion": "cnperf.dev/v1alpha1", "kind": "Run", "uuid": uuid,
        "startTime": "2026-11-28T00:00:00Z", "endTime": "0001-01-01T00:00:00Z",
        "cnperfVersion": "v0.1.0-dev", "platform": "local", "results": []}}, separators=(",", ":")) + "\n")
    for i in range(n):
        bps = 9.0e9 + (i % 1000) * 1e6
        r = {"type": "result", "uuid": uuid, "result": {
            "profile": "TCP_STREAM", "driver": "native", "path": "loopback",
            "params": {"durationSeconds": 1, "samples": 1, "messageSizeBytes": 131072 + i, "parallel": 1},
            "startTime": "2026-11-28T00:00:01Z", "endTime": "2026-11-28T00:00:02Z",
            "samples": [{"index": 0, "startTime": "2026-11-28T00:00:01Z", "endTime": "2026-11-28T00:00:02Z",
                         "durationSeconds": 1, "throughputBitsPerSecond": bps, "bytesSent": int(bps / 8)}],
            "summary": {"samplesTotal": 1, "samplesFailed": 0, "throughputBitsPerSecond": {
                "n": 1, "mean": bps, "median": bps, "stddev": 0, "cov": 0, "min": bps, "max": bps,
                "ci95Low": bps, "ci95High": bps}}}}
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
    f.write(json.dumps({"type": "end", "uuid": uuid, "endTime": "2026-11-28T01:00:00Z", "interrupted": False},
                       separators=(",", ":")) + "\n")
