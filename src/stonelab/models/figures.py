"""Figures of ``model=belief_vit`` (seed 001), drawn with matplotlib's Agg canvas (no
display, no pyplot state), saved as PNG and sent to the loggers that take images.

- `belief_error_vs_accuracy`: seed Fig. 6, Acc@1 and Acc@5 against the mean belief
  error over training (training windows and validation epochs).
- `risk_coverage`: the gate's selective-prediction curve (belief confidence vs the
  max-softmax baseline, at equal coverage) with each AURC.
- `position_view`: seed Fig. 7, one position: the board, the policy heatmap, the
  belief (ownership) map, and the value, confidence and top-5 moves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from stonelab.protocols.gtp import GTP_LETTERS, move_name


def new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def log_figure(loggers: Sequence, tag: str, fig: Figure, path: Path, step: int) -> list[str]:
    """Send ``fig`` to every logger that takes images (TensorBoard, W&B); returns their names."""
    sent = []
    for logger in loggers or ():
        experiment = getattr(logger, "experiment", None)
        name = type(logger).__name__
        try:
            if name == "TensorBoardLogger" and hasattr(experiment, "add_figure"):
                experiment.add_figure(tag, fig, global_step=step, close=False)
            elif hasattr(logger, "log_image"):  # WandbLogger
                logger.log_image(key=tag, images=[str(path)], step=step)
            else:
                continue
        except Exception as exc:  # a logger that cannot take the image must not stop training
            print(f"figure {tag}: not logged to {name} ({exc})")
            continue
        sent.append(name)
    return sent


# --------------------------------------------------------------------------------------
# Seed Fig. 6


def belief_error_vs_accuracy(train: Sequence[dict], val: Sequence[dict]) -> Figure:
    """Acc@1 / Acc@5 against the mean belief error; each point is one training window
    (``train``: dicts of belief_error, top1, top5, step) or one validation epoch (``val``)."""
    fig = new_figure(10, 4)
    for i, key in enumerate(("top1", "top5")):
        ax = fig.add_subplot(1, 2, i + 1)
        if train:
            x = [h["belief_error"] for h in train]
            y = [h[key] for h in train]
            steps = [h["step"] for h in train]
            sc = ax.scatter(x, y, c=steps, cmap="viridis", s=14, label="training windows")
            fig.colorbar(sc, ax=ax, label="step")
        if val:
            ax.plot([h["belief_error"] for h in val], [h[key] for h in val], "o-", color="tab:red",
                    label="validation epochs")
            for h in val:
                ax.annotate(f"e{h['epoch']}", (h["belief_error"], h[key]), fontsize=7)
        ax.set_xlabel("mean belief error |confidence - correct|")
        ax.set_ylabel(f"Acc@{key[3:]}")
        ax.set_title(f"Acc@{key[3:]} vs belief error")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig


# --------------------------------------------------------------------------------------
# Risk-coverage


def risk_coverage(correct: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, risk): keep the ``k`` highest-``score`` positions, k = 1..M; risk is the
    top-1 error rate among them (ties in the order given)."""
    correct = np.asarray(correct, dtype=np.float64)
    order = np.argsort(-np.asarray(score, dtype=np.float64), kind="stable")
    errors = np.cumsum(1.0 - correct[order])
    k = np.arange(1, len(correct) + 1)
    return k / max(len(correct), 1), errors / k


def aurc(correct: np.ndarray, score: np.ndarray) -> float:
    """Area under the risk-coverage curve (mean risk over the M coverage levels); lower is better."""
    if len(correct) == 0:
        return float("nan")
    return float(risk_coverage(correct, score)[1].mean())


def risk_coverage_figure(curves: dict[str, tuple[np.ndarray, np.ndarray, float]], title: str) -> Figure:
    """``curves``: label -> (coverage, risk, aurc)."""
    fig = new_figure(5.5, 4)
    ax = fig.add_subplot(1, 1, 1)
    for label, (cov, risk, area) in curves.items():
        ax.plot(cov, risk, label=f"{label} (AURC {area:.4f})")
    ax.set_xlabel("coverage (fraction of positions answered)")
    ax.set_ylabel("risk (top-1 error rate)")
    ax.set_title(title)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


# --------------------------------------------------------------------------------------
# Seed Fig. 7


def _board_axes(ax, n: int, board: np.ndarray, title: str) -> None:
    ax.set_facecolor("#dcb35c")
    for i in range(n):
        ax.plot([0, n - 1], [i, i], color="k", lw=0.4, zorder=1)
        ax.plot([i, i], [0, n - 1], color="k", lw=0.4, zorder=1)
    rows, cols = np.divmod(np.arange(n * n), n)
    for colour, face in ((1, "black"), (-1, "white")):
        on = board == colour
        ax.scatter(cols[on], rows[on], s=(260 / n) ** 2, c=face, edgecolors="black", linewidths=0.5, zorder=3)
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(n - 0.3, -0.7)  # row 0 on top
    ax.set_xticks(range(n))
    ax.set_xticklabels(list(GTP_LETTERS[:n]), fontsize=6)
    ax.set_yticks(range(n))
    ax.set_yticklabels([str(n - r) for r in range(n)], fontsize=6)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)


def position_view(board: np.ndarray, to_play: int, probs: np.ndarray, *, belief: np.ndarray | None = None,
                  value: float | None = None, confidence: float | None = None, played: int | None = None,
                  gated_move: int | None = None, gate_threshold: float | None = None,
                  title: str = "") -> Figure:
    """Board | policy heatmap | belief map | numbers.

    board: int [n*n] (+1 black, -1 white); probs: [n*n + 1] move probabilities (pass
    last); belief: [n, n] expected ownership from the side to move's view (drawn from
    black's view); value: expected result for the side to move in [-1, 1];
    confidence: the belief head's P(top move is the expert's); played: the game's move.
    """
    board = np.asarray(board).reshape(-1)
    n = int(round(len(board) ** 0.5))
    probs = np.asarray(probs, dtype=np.float64).reshape(-1)
    side = "black" if to_play == 1 else "white"
    fig = new_figure(17, 4.6)
    ax = fig.add_subplot(1, 4, 1)
    _board_axes(ax, n, board, f"board ({side} to move)")
    if played is not None and played < n * n:
        r, c = divmod(int(played), n)
        ax.scatter([c], [r], marker="x", c="red", s=60, zorder=4, label=f"played {move_name(played, n)}")
        ax.legend(fontsize=7, loc="upper right")

    ax = fig.add_subplot(1, 4, 2)
    heat = probs[:n * n].reshape(n, n)
    im = ax.imshow(heat, cmap="magma", interpolation="nearest")
    rows, cols = np.divmod(np.arange(n * n), n)
    for colour, face in ((1, "black"), (-1, "white")):
        on = board == colour
        ax.scatter(cols[on], rows[on], s=(200 / n) ** 2, c=face, edgecolors="grey", linewidths=0.4)
    top = np.argsort(-probs, kind="stable")[:5]
    for rank, m in enumerate(top):
        if m < n * n:
            r, c = divmod(int(m), n)
            ax.text(c, r, str(rank + 1), ha="center", va="center", color="cyan", fontsize=7, weight="bold")
    fig.colorbar(im, ax=ax, fraction=0.046)
    ax.set_title(f"policy heatmap (pass {probs[n * n]:.3f})", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])

    ax = fig.add_subplot(1, 4, 3)
    if belief is not None:
        black_view = np.asarray(belief, dtype=np.float64).reshape(n, n) * to_play
        im = ax.imshow(black_view, cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
        fig.colorbar(im, ax=ax, fraction=0.046, label="black +1 / white -1")
        ax.set_title("belief map: end-of-game ownership", fontsize=9)
    else:
        ax.text(0.5, 0.5, "no belief head", ha="center", va="center")
        ax.set_title("belief map", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])

    ax = fig.add_subplot(1, 4, 4)
    ax.axis("off")
    lines = []
    if value is not None:
        lines.append(f"value ({side}): {value:+.3f}")
    if confidence is not None:
        lines.append(f"confidence P(top move = expert): {confidence:.3f}")
    if gated_move is not None and gate_threshold is not None:
        if confidence is not None and confidence < gate_threshold:
            lines.append(f"gate (< {gate_threshold:g}): {move_name(top[0], n)} -> {move_name(gated_move, n)}")
        else:
            lines.append(f"gate (< {gate_threshold:g}): not triggered")
    if played is not None:
        lines.append(f"game move: {move_name(played, n)}")
    lines.append("")
    lines.append("top-5 moves:")
    for rank, m in enumerate(top):
        lines.append(f"  {rank + 1}. {move_name(int(m), n):>5}  {probs[m]:.3f}")
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=9,
            transform=ax.transAxes)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
