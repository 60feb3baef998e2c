"""stonelab.reporting: training curves and sweep collection from real (tiny) runs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from stonelab import reporting
from stonelab.pipeline import train


@pytest.fixture(scope="module")
def sweep_folder(tmp_path_factory, compose_train):
    root = tmp_path_factory.mktemp("sweep")
    for name, overrides in [("0", ["pruning=none"]), ("1", ["pruning=local", "pruning.window=4"]),
                            ("2", ["pruning=topk"])]:
        train(compose_train(["game=gomoku_8x8_c5", *overrides], root / name))
    return root


def test_sweep_collects_every_run(sweep_folder):
    csv_path, png_path, time_png = reporting.write_sweep_report(sweep_folder)
    rows = list(csv.DictReader(open(csv_path)))
    assert [r["run"] for r in rows] == ["0", "1", "2"]
    assert [int(r["window"]) for r in rows] == [0, 4, 4]
    assert [int(r["top_k"]) for r in rows] == [0, 0, 8]
    assert float(rows[0]["candidate_reduction"]) == 0.0
    assert float(rows[1]["candidate_reduction"]) > 0.0
    # A run's reduction is the mean over all its rounds, not the last round's.
    series = [v for _, v in reporting.read_metrics(sweep_folder / "1")["search/candidate_reduction"]]
    assert float(rows[1]["candidate_reduction"]) == pytest.approx(sum(series) / len(series))
    assert png_path.stat().st_size > 1000 and time_png.name == "win_ratio_vs_time.png" and time_png.stat().st_size > 1000


def test_curve_png(sweep_folder):
    out = reporting.plot_training_curve(sweep_folder / "1")
    assert out.name == "training_curve.png" and out.stat().st_size > 1000


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert reporting.main(["sweep", str(tmp_path)]) == 2
    assert "no result.json" in capsys.readouterr().err
    assert reporting.main(["curve", str(tmp_path)]) == 2


def test_broken_result_file_is_named(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "result.json").write_text("{truncated")
    assert reporting.main(["sweep", str(tmp_path)]) == 2
    assert "run/result.json: not a result.json" in capsys.readouterr().err


def test_time_to_strength_is_the_first_evaluation_reaching_the_target(sweep_folder):
    import json

    result = json.loads((next(sweep_folder.rglob("result.json"))).read_text())
    elapsed = [e["elapsed_s"] for e in result["evaluations"]]
    assert elapsed == sorted(elapsed) and elapsed[0] > 0  # the run's training seconds at each evaluation
    cpu = [e["cpu_s"] for e in result["evaluations"]]
    assert cpu == sorted(cpu) and cpu[0] > 0  # and its own CPU seconds
    evals = [{"win_ratio": 0.2, "elapsed_s": 10.0, "cpu_s": 8.0}, {"win_ratio": 0.65, "elapsed_s": 20.0, "cpu_s": 15.0},
             {"win_ratio": 0.9, "elapsed_s": 30.0, "cpu_s": 21.0}]
    assert reporting.seconds_to_target(evals, 0.6) == 20.0
    assert reporting.seconds_to_target(evals, 0.6, "cpu_s") == 15.0
    assert reporting.seconds_to_target(evals, 0.95) is None
    assert reporting.seconds_to_target([{"win_ratio": 1.0}], 0.5) is None  # older runs: no elapsed_s
    # With target 0 every run gets there at its first evaluation.
    for row in reporting.collect_results(sweep_folder, target=0.0):
        first = json.loads((sweep_folder / row["run"] / "result.json").read_text())["evaluations"][0]
        assert row["seconds_to_target"] == first["elapsed_s"]
        assert row["cpu_seconds_to_target"] == first["cpu_s"]


def _supervised_run(folder: Path, name: str, validations: list[tuple[float, int, float]]) -> Path:
    """A run folder with a metrics.csv as a supervised run writes it: training rows between
    validations, each validation with its training minutes."""
    run = folder / name
    (run / "csv").mkdir(parents=True)
    with open(run / "csv" / "metrics.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "step", "train/loss", "time/train_minutes", "val/top1", "val/top5", "val/top10"])
        for epoch, (minutes, step, top1) in enumerate(validations):
            writer.writerow([epoch, step - 1, 3.0, "", "", "", ""])
            writer.writerow([epoch, step, "", minutes, top1, top1 + 0.3, top1 + 0.4])
    return run


def test_recipes_puts_runs_side_by_side_at_the_same_minutes(tmp_path, capsys):
    plain = _supervised_run(tmp_path, "plain", [(14.0, 1500, 0.30), (29.0, 3000, 0.34), (44.0, 4500, 0.36)])
    res = _supervised_run(tmp_path, "resnet", [(16.0, 1500, 0.31), (32.0, 3000, 0.37)])
    assert reporting.main(["recipes", str(plain), str(res), "--out", str(tmp_path / "report"),
                 "--minutes", "15", "30"]) == 0
    table = capsys.readouterr().out
    # At 15 minutes the residual run had not validated yet; at 30 it shows its 16-minute point.
    assert "| plain | 30.0% (step 1,500) | 34.0% (step 3,000) |" in table
    assert "| resnet | - | 31.0% (step 1,500) |" in table
    rows = list(csv.DictReader(open(tmp_path / "report" / "recipes.csv")))
    assert len(rows) == 5 and rows[-1]["run"] == "resnet" and float(rows[-1]["top1"]) == 0.37
    assert (tmp_path / "report" / "recipes.png").stat().st_size > 0


def test_recipes_of_a_run_without_minutes_is_one_line(tmp_path, capsys):
    run = _supervised_run(tmp_path, "old", [])
    assert reporting.main(["recipes", str(run), "--out", str(tmp_path / "report")]) == 2
    assert "no validation with time/train_minutes" in capsys.readouterr().err


def test_gtp_matches_table_recounts_passes_from_the_moves(tmp_path, capsys):
    from stonelab.reporting import main

    folder = tmp_path / "match"
    folder.mkdir()
    records = [{"model": "black", "black": "stonelab", "white": "GNU Go", "winner": "black", "score": "B+74",
                "moves": ["E5", "pass", "pass"]},  # white (the opponent) passed with the board open
               {"model": "white", "black": "GNU Go", "white": "stonelab", "winner": "black", "score": "B+88",
                "moves": ["E5", "pass", "pass"]}]  # the model, white, passed with the board open
    (folder / "gtp_match.json").write_text(json.dumps(
        {"board_size": 9, "komi": 7.0, "wins": 1, "draws": 0, "losses": 1, "win_ratio": 0.5,
         "ci_low": 0.09, "ci_high": 0.91, "records": records}))
    assert main(["gtp_matches", str(folder)]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row == f"| {folder} | 1 / 0 / 1 | 0.50 [0.09, 0.91] | 1/1 | 0/1 | 3 | 1 | -7.0 (2 games) |"
    assert main(["gtp_matches", str(folder), str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("| all 2 together | 2 / 0 / 2 | 0.50 [")
    assert main(["gtp_matches", str(tmp_path)]) == 2  # no result there: one error line
    assert capsys.readouterr().err.startswith("error: ")
    (folder / "gtp_match.json").write_text('{"records": [{"moves": []}]}')
    assert main(["gtp_matches", str(folder)]) == 2
    assert "not a task=gtp_match result" in capsys.readouterr().err
