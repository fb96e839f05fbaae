"""Reference change points from Apache Otava (pip: apache-otava 0.8.0) for QBHistoryTests.

    pip install --no-deps --target /tmp/otava-pkg apache-otava==0.8.0   # needs numpy, scipy
    PYTHONPATH=/tmp/otava-pkg python3 otava_changepoints.py > otava_changepoints.json

Each case: a series (seeded, numpy default_rng) and Otava's compute_change_points with its
defaults (window 50, max p-value 0.001, no minimum magnitude): index, p-value, means.
"""
import json

import numpy as np
from otava.analysis import compute_change_points


def series():
    rng = np.random.default_rng(20261124)
    yield "one step down 10%", list(100 + rng.normal(0, 2, 25)) + list(90 + rng.normal(0, 2, 15))
    yield "flat noise", list(50 + rng.normal(0, 1.5, 60))
    yield "two steps", list(10 + rng.normal(0, 0.2, 30)) + list(11 + rng.normal(0, 0.2, 30)) + list(10.5 + rng.normal(0, 0.2, 30))
    yield "three steps over 160 points", (list(200 + rng.normal(0, 3, 40)) + list(215 + rng.normal(0, 3, 50))
                                          + list(190 + rng.normal(0, 3, 30)) + list(205 + rng.normal(0, 3, 40)))
    yield "small 3% step in 1% noise", list(1.0 + rng.normal(0, 0.01, 20)) + list(1.03 + rng.normal(0, 0.01, 20))
    yield "outlier", [5.0] * 0 + list(5 + rng.normal(0, 0.1, 20)) + [9.0] + list(5 + rng.normal(0, 0.1, 20))
    yield "short", [1.0, 1.1, 0.9, 2.0, 2.1, 1.9]


cases = []
for name, s in series():
    s = [float(x) for x in s]
    cps, _ = compute_change_points(s)
    cases.append({
        "name": name,
        "series": s,
        "change_points": [
            {"index": int(c.index), "pvalue": float(c.stats.pvalue), "mean_before": float(c.stats.mean_1),
             "mean_after": float(c.stats.mean_2)}
            for c in cps
        ],
    })
print(json.dumps({"otava": "0.8.0", "window": 50, "max_pvalue": 0.001, "cases": cases}, indent=1))
