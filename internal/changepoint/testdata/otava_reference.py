"""Runs Apache Otava's change point detection on series read from standard input.

Input (JSON): {"window": 50, "pvalue": 0.001, "magnitude": 0.0, "series": {"name": [1.0, ...]}}
Output (JSON): {"otava": "<version>", "points": {"name": [{"index": 5, "pvalue": ...,
"meanBefore": ..., "meanAfter": ...}, ...]}}

It calls otava.analysis.compute_change_points, the function Otava's own `otava analyze` runs on
every metric (otava/series.py AnalyzedSeries), with the options that command passes.
"""
import json
import sys
from importlib.metadata import version

from otava.analysis import compute_change_points

req = json.load(sys.stdin)
out = {"otava": version("apache-otava"), "points": {}}
for name, values in req["series"].items():
    points, _ = compute_change_points(
        list(values),
        window_len=req.get("window", 50),
        max_pvalue=req.get("pvalue", 0.001),
        min_magnitude=req.get("magnitude", 0.0),
    )
    out["points"][name] = [
        {
            "index": int(p.index),
            "pvalue": float(p.stats.pvalue),
            "meanBefore": float(p.stats.mean_1),
            "meanAfter": float(p.stats.mean_2),
        }
        for p in points
    ]
json.dump(out, sys.stdout)
