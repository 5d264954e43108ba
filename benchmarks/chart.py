"""A horizontal bar chart of the ratios (mindtorch_v2 time / PyTorch time), one bar per case."""
import math
import sys


def write(results, path, title):
    """Draw results (dicts with 'case' and 'ratio') into a PNG; False (with a message) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return False
    names = [r["case"] if len(r["case"]) <= 48 else r["case"][:45] + "..." for r in results]
    ratios = [r["ratio"] for r in results]
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(names) + 1.5))
    ys = range(len(names))
    colors = ["#2a9d8f" if v <= 1.0 else "#e76f51" for v in ratios]
    ax.barh(ys, ratios, color=colors)
    ax.set_xscale("log", base=2)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(ys), names, fontsize=7)
    ax.invert_yaxis()
    lo = min(ratios + [0.5])
    hi = max(ratios + [2.0])
    ax.set_xlim(2 ** math.floor(math.log2(lo)), 2 ** math.ceil(math.log2(hi)))
    for y, v in zip(ys, ratios):
        ax.text(v, y, f" {v:.2f}", va="center", fontsize=6)
    ax.set_xlabel("mindtorch_v2 time / PyTorch time (log scale; below 1: mindtorch_v2 faster)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()  # room for the labels
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":  # re-draw a saved run: python -m benchmarks.chart results.json out.png
    import json
    with open(sys.argv[1]) as f:
        run = json.load(f)
    m = run["machine"]
    write(run["results"], sys.argv[2], f"mindtorch_v2 / PyTorch {m['torch']['version']}, {m['cpu']}, {m['cores']} cores")
