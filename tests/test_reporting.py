"""stonelab.reporting: training curves and sweep collection from real (tiny) runs."""

from __future__ import annotations

import csv

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
    evals = [{"win_ratio": 0.2, "elapsed_s": 10.0}, {"win_ratio": 0.65, "elapsed_s": 20.0},
             {"win_ratio": 0.9, "elapsed_s": 30.0}]
    assert reporting.seconds_to_target(evals, 0.6) == 20.0
    assert reporting.seconds_to_target(evals, 0.95) is None
    assert reporting.seconds_to_target([{"win_ratio": 1.0}], 0.5) is None  # older runs: no elapsed_s
    # With target 0 every run gets there at its first evaluation.
    for row in reporting.collect_results(sweep_folder, target=0.0):
        first = json.loads((sweep_folder / row["run"] / "result.json").read_text())["evaluations"][0]
        assert row["seconds_to_target"] == first["elapsed_s"]
