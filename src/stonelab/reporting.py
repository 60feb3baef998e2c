"""Figures and tables from finished runs: ``python -m stonelab.reporting curve RUN_DIR``.

``curve`` draws loss, policy entropy and evaluation win ratio (with 95% Wilson
intervals) against training rounds into RUN_DIR/training_curve.png.

``sweep FOLDER`` collects every result.json under FOLDER (a Hydra multirun, a
folder of W&B-agent runs, or the experiment logs) into FOLDER/results.csv and
draws candidate reduction against relative strength (best win ratio over the
unpruned run's best, when one is in the folder) into FOLDER/pruning_tradeoff.png,
and every run's evaluations against its training seconds (Table 1's time to
strength, runs side by side) into FOLDER/win_ratio_vs_time.png.

``recipes RUN_DIR... --out DIR`` puts supervised Go runs side by side by training wall
time (``time/train_minutes``, logged with each validation): DIR/recipes.csv (every
validation of every run), DIR/recipes.png (validation top-1 against minutes) and a
Markdown table on stdout of each run's top-1 at the same minutes.

``gtp_matches FOLDER...`` prints a Markdown table of finished ``task=gtp_match`` folders:
wins, draws, losses, the win ratio and its interval, wins by colour, the median game length
and the model's passes made while points were open, recounted from each game's moves (so
records written before ``task=gtp_match`` counted them are counted the same way), and the
model's mean final margin in points over the games scored on the board (``B+3.5`` /
``W+88``; resignations and void games left out): how far a side that loses every game is
from winning.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
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
        ax.set_xlabel("update")
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


RESULT_COLUMNS = ["run", "task_name", "game", "window", "threat_aware", "threat_space", "adaptive",
                  "top_k", "top_k_mode", "seconds", "games_played", "train_steps", "final_win_ratio",
                  "final_ci_low", "final_ci_high", "best_win_ratio", "candidates_mean",
                  "candidate_reduction", "opponent", "target_win_ratio", "seconds_to_target",
                  "cpu_seconds_to_target", "cpu_seconds"]
DEFAULT_TARGET = 0.6  # seed 000's best win ratio for its pruned 8x8 connect-5 run


def seconds_to_target(evaluations: list[dict], target: float, clock: str = "elapsed_s") -> float | None:
    """Training seconds before the first evaluation scoring >= ``target`` on ``clock``:
    ``elapsed_s`` (wall) or ``cpu_s`` (the run's own CPU seconds, all its threads). None:
    never, or a run recorded before evaluations carried that clock."""
    for e in evaluations:
        if e["win_ratio"] >= target:
            return e.get(clock)
    return None


def run_mean(run_dir: Path, metric: str, last: float | None) -> float | None:
    """The mean of a per-round metric over the whole run (its CSV log), else ``last``:
    one round's candidate count says little about a run whose games change as it learns."""
    try:
        values = [v for _, v in read_metrics(run_dir).get(metric, [])]
    except FileNotFoundError:
        return last
    return sum(values) / len(values) if values else last


def collect_results(folder: Path, target: float = DEFAULT_TARGET) -> list[dict]:
    """One row per result.json under ``folder``, sorted by path."""
    rows = []
    for path in sorted(folder.rglob("result.json")):
        try:
            result = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not a result.json written by stonelab ({exc})") from exc
        pruning = result.get("pruning") or {}
        evals = result.get("evaluations") or []
        last = evals[-1] if evals else {}
        selfplay = result.get("selfplay") or {}
        rows.append({
            "run": str(path.parent.relative_to(folder)), "task_name": result.get("task_name"),
            "game": result.get("game"), "window": pruning.get("window", 0),
            "threat_aware": pruning.get("threat_aware", False), "threat_space": pruning.get("threat_space", False),
            "adaptive": pruning.get("adaptive", False), "top_k": pruning.get("top_k", 0),
            "top_k_mode": pruning.get("top_k_mode", "union"), "seconds": result.get("seconds"),
            "games_played": result.get("games_played"), "train_steps": result.get("train_steps"),
            "final_win_ratio": result.get("final_win_ratio"), "final_ci_low": last.get("ci_low"),
            "final_ci_high": last.get("ci_high"), "best_win_ratio": result.get("best_win_ratio"),
            "candidates_mean": run_mean(path.parent, "search/candidates_mean", selfplay.get("search/candidates_mean")),
            "candidate_reduction": run_mean(path.parent, "search/candidate_reduction",
                                            selfplay.get("search/candidate_reduction")),
            "opponent": last.get("opponent"), "target_win_ratio": target,
            "seconds_to_target": seconds_to_target(evals, target),
            "cpu_seconds_to_target": seconds_to_target(evals, target, "cpu_s"),
            "cpu_seconds": last.get("cpu_s"),  # at the last evaluation
        })
    return rows


def write_sweep_report(folder: Path, target: float = DEFAULT_TARGET) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = collect_results(folder, target)
    if not rows:
        raise FileNotFoundError(f"{folder}: no result.json below it (did the runs finish?)")
    csv_path = folder / "results.csv"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RESULT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    unpruned = [r["best_win_ratio"] for r in rows
                if r["window"] == 0 and r["top_k"] == 0 and r["best_win_ratio"] is not None]
    reference = max(unpruned) if unpruned and max(unpruned) > 0 else None
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for r in rows:
        if r["best_win_ratio"] is None or r["candidate_reduction"] is None:
            continue
        y = r["best_win_ratio"] / reference if reference else r["best_win_ratio"]
        ax.scatter(r["candidate_reduction"], y)
        label = f"w{r['window']}" + ("+t" if r["threat_aware"] else "") + ("+ts" if r["threat_space"] else "") \
            + ("+ad" if r["adaptive"] else "") + (f"+top{r['top_k']}" if r["top_k"] else "") + ("(within)" if r["top_k"] and r["top_k_mode"] == "within" else "")
        ax.annotate(label, (r["candidate_reduction"], y), fontsize=7)
    ax.set_xlabel("candidate reduction (fraction of legal moves pruned)")
    ax.set_ylabel("relative strength (best win ratio / unpruned)" if reference else "best win ratio")
    ax.set_title(f"pruning trade-off: {folder.name}")
    fig.tight_layout()
    png_path = folder / "pruning_tradeoff.png"
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return csv_path, png_path, plot_win_ratio_vs_time(folder)


def plot_win_ratio_vs_time(folder: Path) -> Path:
    """Each run's evaluation win ratios (95% intervals) against its training seconds.

    Points are labelled with the opponent's playouts where it changes (the opponent
    grows after a perfect score), since ratios against different opponents differ.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for path in sorted(folder.rglob("result.json")):
        evals = [e for e in json.loads(path.read_text()).get("evaluations") or [] if "elapsed_s" in e]
        if not evals:
            continue
        t = [e["elapsed_s"] / 60 for e in evals]
        y = [e["win_ratio"] for e in evals]
        err = [[e["win_ratio"] - e["ci_low"] for e in evals], [e["ci_high"] - e["win_ratio"] for e in evals]]
        line = ax.errorbar(t, y, yerr=err, marker="o", ms=3, capsize=2, lw=1,
                           label=str(path.parent.relative_to(folder)))
        shown = None
        for e, x in zip(evals, t, strict=True):
            if e["opponent"] != shown:
                ax.annotate(e["opponent"].replace("pure_mcts_", "p"), (x, e["win_ratio"]), fontsize=6,
                            color=line[0].get_color())
                shown = e["opponent"]
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("training minutes (wall clock, resumes included)")
    ax.set_ylabel("win ratio (95% Wilson interval)")
    ax.set_title(f"time to strength: {folder.name}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = folder / "win_ratio_vs_time.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def read_validations(run_dir: Path) -> list[dict]:
    """One row per validation of a supervised run: minutes, step, top-1/5/10, value accuracy."""
    path = run_dir / "csv" / "metrics.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no CSV metrics (was the run made with logger=csv?)")
    rows = []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("time/train_minutes") and row.get("val/top1"):
                rows.append({"run": run_dir.name, "minutes": float(row["time/train_minutes"]),
                             "step": int(float(row["step"])),
                             **{k: float(row[f"val/{k}"]) for k in ("top1", "top5", "top10")},
                             "value_acc": float(row["val/value_acc"]) if row.get("val/value_acc") else None})
    if not rows:
        raise ValueError(f"{path}: no validation with time/train_minutes (runs from before the "
                         f"WallClock callback, or none validated yet)")
    return rows


def at_minutes(rows: list[dict], minutes: float) -> dict | None:
    """The run's last validation at or before ``minutes`` of training."""
    done = [r for r in rows if r["minutes"] <= minutes + 1e-9]
    return done[-1] if done else None


def write_recipe_report(run_dirs: list[Path], out: Path, marks: list[float]) -> tuple[Path, Path, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {d.name: read_validations(d) for d in run_dirs}
    out.mkdir(parents=True, exist_ok=True)
    table_csv = out / "recipes.csv"
    with open(table_csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["run", "minutes", "step", "top1", "top5", "top10", "value_acc"])
        writer.writeheader()
        for rows in runs.values():
            writer.writerows(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, rows in runs.items():
        ax.plot([r["minutes"] for r in rows], [100 * r["top1"] for r in rows], marker="o", ms=3, label=name)
    ax.set_xlabel("training minutes (wall clock, resumes included)")
    ax.set_ylabel("validation top-1 (%)")
    ax.set_title("Go move prediction: top-1 against training time")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    figure = out / "recipes.png"
    fig.savefig(figure, dpi=110)
    plt.close(fig)
    lines = ["| run | " + " | ".join(f"{m:g} min" for m in marks) + " |",
             "|---|" + "---|" * len(marks)]
    for name, rows in runs.items():
        cells = []
        for m in marks:
            r = at_minutes(rows, m)
            cells.append("-" if r is None else f"{100 * r['top1']:.1f}% (step {r['step']:,})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return table_csv, figure, "\n".join(lines)


def gtp_match_table(folders: list[Path]) -> str:
    """A Markdown table, one row per ``task=gtp_match`` folder (see the module doc)."""
    from stonelab.arena.ratings import MatchResult
    from stonelab.protocols.gtp import GTPError

    lines = ["| folder | W / D / L | win ratio [95%] | won as black | won as white | median moves "
             "| model passes with points open | model's mean margin |", "|---|---|---|---|---|---|---|---|"]
    total = [0, 0, 0]
    for folder in folders:
        path = folder / "gtp_match.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no finished gtp_match result there")
        try:
            line, counts = _gtp_match_row(folder, json.loads(path.read_text()))
        except (json.JSONDecodeError, KeyError, TypeError, IndexError, AttributeError, GTPError) as exc:
            raise ValueError(f"{path}: not a task=gtp_match result ({type(exc).__name__}: {exc})") from None
        lines.append(line)
        total = [a + b for a, b in zip(total, counts, strict=True)]
    if len(folders) > 1:  # the folders as one match (e.g. the same settings from other openings)
        together = MatchResult(*total)
        lo, hi = together.interval
        lines.append(f"| all {len(folders)} together | {together.wins} / {together.draws} / {together.losses} "
                     f"| {together.win_ratio:.2f} [{lo:.2f}, {hi:.2f}] | | | | | |")
    return "\n".join(lines)


def _gtp_match_row(folder: Path, result: dict) -> tuple[str, tuple[int, int, int]]:
    """One folder's table row and its (wins, draws, losses)."""
    from stonelab.arena.gtp_match import GTPGame
    from stonelab.protocols.gtp import parse_vertex

    won = {"black": 0, "white": 0}
    lengths, open_passes, margins = [], 0, []
    for record in result["records"]:
        game = GTPGame(record["black"], record["white"], result["board_size"], result["komi"])
        colour = 1
        for name in record["moves"]:  # colours alternate from black, passes included
            game.moves.append((colour, parse_vertex(name, result["board_size"])))
            colour = -colour
        open_passes += game.passes_with_open_points(1 if record["model"] == "black" else -1)
        won[record["model"]] += record["winner"] == record["model"]
        lengths.append(len(record["moves"]))
        margin = _model_margin(record)
        if margin is not None:
            margins.append(margin)
    games = {c: sum(r["model"] == c for r in result["records"]) for c in won}
    line = (f"| {folder} | {result['wins']} / {result['draws']} / {result['losses']} "
            f"| {result['win_ratio']:.2f} [{result['ci_low']:.2f}, {result['ci_high']:.2f}] "
            f"| {won['black']}/{games['black']} | {won['white']}/{games['white']} "
            f"| {sorted(lengths)[len(lengths) // 2]} | {open_passes} "
            f"| {f'{sum(margins) / len(margins):+.1f} ({len(margins)} games)' if margins else '-'} |")
    return line, (result["wins"], result["draws"], result["losses"])


def _model_margin(record: dict) -> float | None:
    """The model's final margin in points (negative: it lost by that much), or None when the
    game was not scored on the board (a resignation, a void game, no score kept)."""
    score = str(record.get("score") or "")
    if score in ("0", "Draw"):
        return 0.0
    found = re.fullmatch(r"([BW])\+(\d+(?:\.\d+)?)", score)
    if not found:
        return None
    winner = "black" if found.group(1) == "B" else "white"
    return float(found.group(2)) * (1 if winner == record["model"] else -1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stonelab.reporting", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    curve = sub.add_parser("curve", help="training curve PNG of one run")
    curve.add_argument("run_dir", type=Path)
    curve.add_argument("--out", type=Path, default=None)
    sweep = sub.add_parser("sweep", help="results.csv and the trade-off plot of a folder of runs")
    sweep.add_argument("folder", type=Path)
    sweep.add_argument("--target", type=float, default=DEFAULT_TARGET,
                       help="win ratio for the seconds_to_target column (time to strength; default %(default)s)")
    recipes = sub.add_parser("recipes", help="supervised Go runs side by side by training minutes")
    recipes.add_argument("run_dirs", type=Path, nargs="+")
    recipes.add_argument("--out", type=Path, required=True, help="folder for recipes.csv and recipes.png")
    recipes.add_argument("--minutes", type=float, nargs="+", default=[15, 30, 45, 60],
                         help="the table's columns: top-1 at these training minutes (default %(default)s)")
    matches = sub.add_parser("gtp_matches", help="a table of finished task=gtp_match folders")
    matches.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "gtp_matches":
            print(gtp_match_table(args.folders))
        elif args.command == "curve":
            print(plot_training_curve(args.run_dir, args.out))
        elif args.command == "recipes":
            *paths, table = write_recipe_report(args.run_dirs, args.out, args.minutes)
            print(table)
            for path in paths:
                print(path)
        else:
            for path in write_sweep_report(args.folder, args.target):
                print(path)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
