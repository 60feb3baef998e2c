"""The one JSON object of scripts/gpu_check.sh, from what its steps left behind.

    python scripts/gpu_check_json.py STEPS_DIR SECONDS BUDGET NAME...

STEPS_DIR/NAME/ holds a step's ``command``, and ``status`` ("rc seconds limit"),
``stdout``, ``stderr`` and ``result.json`` (training runs) once it ran, or ``skipped``
(why it did not). Each step becomes ``{"command", "rc", "seconds", "limit_s",
"timed_out", "result"}``, with ``"error"`` (the last lines of its stderr) when it
failed; ``summary`` gathers the headline numbers. Never fails on a missing or broken
step: that step says what went wrong instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ERROR_LINES = 8


def last_json_object(text: str):
    """The last line of ``text`` that is a JSON object (bench prints one after Lightning's chatter)."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def read_step(folder: Path) -> dict:
    """One step's record (see the module docstring)."""
    out: dict = {"command": _text(folder / "command").strip()}
    if (folder / "skipped").is_file():
        return {**out, "skipped": _text(folder / "skipped").strip()}
    try:
        rc, seconds, limit = (int(x) for x in _text(folder / "status").split())
    except ValueError:
        return {**out, "error": "the step left no exit status (the script was stopped while it ran?)"}
    # timeout(1) exits 124 when it stopped the command, 137 when it had to kill it.
    out.update(rc=rc, seconds=seconds, limit_s=limit, timed_out=rc in (124, 137))
    result_file = folder / "result.json"
    try:
        out["result"] = (json.loads(result_file.read_text()) if result_file.is_file()
                         else last_json_object(_text(folder / "stdout")))
    except (OSError, json.JSONDecodeError) as exc:
        out["result"] = None
        out["result_error"] = f"{result_file.name}: {exc}"
    if rc != 0:
        lines = _text(folder / "stderr").strip().splitlines()[-ERROR_LINES:]
        cause = f"timed out after {limit} s" if out["timed_out"] else f"exit {rc}"
        out["error"] = f"{cause}; " + "\n".join(lines)
    return out


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _get(steps: dict, name: str, *keys):
    """steps[name]["result"][key] for the first key present, else None."""
    result = (steps.get(name) or {}).get("result") or {}
    return next((result[k] for k in keys if k in result), None)


def summary(steps: dict) -> dict:
    """The headline numbers, None where their step did not deliver them."""
    out = {}
    for precision in ("fp32", "bf16"):
        name = f"mcts_{precision}"
        out[f"forward_states_per_s_batch_256_{precision}"] = _get(steps, name, "forward_states_per_s_batch_256")
        out[f"forward_states_per_s_batch_1024_{precision}"] = _get(steps, name, "forward_states_per_s_batch_1024")
        out[f"neural_playouts_per_s_{precision}"] = _get(steps, name, "neural_playouts_per_s")
        out[f"selfplay_games_per_hour_{precision}"] = _get(steps, name, "selfplay_games_per_hour")
        out[f"train_plain_samples_per_s_{precision}"] = _get(steps, f"train_{precision}", "plain_samples_per_s")
        out[f"train_lightning_samples_per_s_{precision}"] = _get(steps, f"train_{precision}",
                                                                  "lightning_samples_per_s")
        out[f"train_data_wait_fraction_{precision}"] = _get(steps, f"train_{precision}", "data_wait_fraction")
    for key in ("tree_playouts_per_s_1_thread", "tree_playouts_per_s_4_threads", "tree_threads_speedup",
                "tree_threads_identical_games"):
        out[key] = _get(steps, "mcts_tree_only", key)
    for name in ("alphazero_2min", "alphazero_resume"):
        for key in ("rounds", "games_played", "train_steps", "job_seconds", "stop_reason"):
            out[f"{name}_{key}"] = _get(steps, name, key)
    out["steps_failed"] = sorted(n for n, s in steps.items() if s.get("rc", 0) != 0 or "error" in s)
    out["steps_skipped"] = sorted(n for n, s in steps.items() if "skipped" in s)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: python scripts/gpu_check_json.py STEPS_DIR SECONDS BUDGET NAME...", file=sys.stderr)
        return 2
    folder, seconds, budget, names = Path(argv[0]), argv[1], argv[2], argv[3:]
    steps = {name: read_step(folder / name) for name in names}
    device = (steps.get("device") or {}).get("result")
    report = {"script": "scripts/gpu_check.sh", "seconds": int(seconds), "budget_s": int(budget),
              "device": device, "summary": summary(steps), "steps": steps}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
