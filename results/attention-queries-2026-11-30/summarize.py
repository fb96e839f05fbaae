"""Per shape of micro.txt: each side's times by round, the time ratios (this / parent) and their median."""
import collections
import statistics
import sys

runs = collections.defaultdict(lambda: {"parent": [], "this": []})
for line in open(sys.argv[1] if len(sys.argv) > 1 else "micro.txt"):
    f = line.split()
    if not f or f[0] not in ("parent", "this"):
        continue
    shape = " ".join(f[1:8]).rstrip(":")
    runs[shape][f[0]].append(float(f[8]))
for shape, v in runs.items():
    ratios = sorted(b / a for a, b in zip(v["parent"], v["this"]))
    print(f"{shape}: parent best {min(v['parent']):.4f} ms, this best {min(v['this']):.4f} ms, "
          f"best/best {min(v['this']) / min(v['parent']):.3f}; per-round time ratios {ratios[0]:.3f}-{ratios[-1]:.3f}, "
          f"median {statistics.median(ratios):.3f}")
