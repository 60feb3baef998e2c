"""Figures and tables from finished runs: ``python -m stonelab.reporting curve RUN_DIR``.

``curve`` draws loss, policy entropy and evaluation win ratio (with 95% Wilson
intervals) against training rounds into RUN_DIR/training_curve.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def read_metrics(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """``{metric: [(step, value), ...]}`` from the run's CSV log."""
    path = run_dir / "csv" / "metrics.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no CSV metrics (was the run made with logger=csv?)")
    series: dict[str, list[tuple[int, float]]] = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            step = int(float(row.get("step") or 0))
            for key, value in row.items():
                if key != "step" and value not in ("", None):
                    series.setdefault(key, []).append((step, float(value)))
    return series


def read_evaluations(run_dir: Path) -> list[dict]:
    path = run_dir / "checkpoints" / "evaluations.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_training_curve(run_dir: Path, out: Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = read_metrics(run_dir)
    evals = read_evaluations(run_dir)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, key, title in ((axes[0], "train/loss", "loss"), (axes[1], "train/policy_entropy", "policy entropy")):
        points = metrics.get(key, [])
        ax.plot([p[0] for p in points], [p[1] for p in points], lw=0.8)
        ax.set_title(title)
        ax.set_xlabel("training step")
    ax = axes[2]
    if evals:
        rounds = [e["round"] for e in evals]
        ratios = [e["win_ratio"] for e in evals]
        lo = [e["win_ratio"] - e["ci_low"] for e in evals]
        hi = [e["ci_high"] - e["win_ratio"] for e in evals]
        ax.errorbar(rounds, ratios, yerr=[lo, hi], marker="o", capsize=3)
        for e in evals:
            ax.annotate(e["opponent"].replace("pure_mcts_", "p"), (e["round"], e["win_ratio"]),
                        fontsize=6, alpha=0.6)
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("win ratio vs opponent (95% Wilson CI)")
    ax.set_xlabel("self-play round")
    fig.suptitle(str(run_dir))
    fig.tight_layout()
    out = out or run_dir / "training_curve.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.reporting", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    curve = sub.add_parser("curve", help="training curve PNG of one run")
    curve.add_argument("run_dir", type=Path)
    curve.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        print(plot_training_curve(args.run_dir, args.out))
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
