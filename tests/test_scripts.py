"""scripts/: the side-by-side runner names real experiments and collects its runs; the GPU check
says plainly that there is no GPU here, and (with a stand-in python) runs every step into one JSON."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def side_by_side(repo_root):
    return repo_root / "scripts" / "side_by_side.sh"


def test_documented_invocations_name_existing_experiments(side_by_side, conf_dir):
    text = side_by_side.read_text()
    names = set(re.findall(r"\b((?:ablation|table1)_[a-z0-9_]+)\b", text))
    assert len(names) >= 11
    for name in names:
        assert (conf_dir / "experiment" / f"{name}.yaml").exists(), name


@pytest.mark.slow  # two whole experiments side by side
def test_runs_two_experiments_side_by_side_and_collects_them(tmp_path, side_by_side, repo_root):
    out = tmp_path / "sbs"
    tiny = ["callbacks.selfplay.games_per_round=2", "callbacks.selfplay.steps_per_round=1",
            "callbacks.evaluation.games=2", "callbacks.evaluation.pure_playouts=20",
            "callbacks.evaluation.max_pure_playouts=20", "search.playouts=8", "trainer.max_epochs=1",
            "trainer.limit_train_batches=1", "data.batch_size=8"]
    proc = subprocess.run(["bash", str(side_by_side), str(out), "00:00:05:00", "2", "ablation_base",
                           "ablation_local6", "--", *tiny], cwd=repo_root, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "done ablation_base" in proc.stdout and "done ablation_local6" in proc.stdout
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert sorted(r["task_name"] for r in rows) == ["ablation_local6", "ablation_none"]
    assert (out / "pruning_tradeoff.png").exists()


def test_usage_without_arguments(side_by_side, repo_root):
    proc = subprocess.run(["bash", str(side_by_side)], cwd=repo_root, capture_output=True, text=True)
    assert proc.returncode == 2 and "side_by_side.sh OUT MAX_TIME PARALLEL" in proc.stdout


# -- scripts/gpu_check.sh: what a lent CUDA machine measures


@pytest.fixture
def gpu_check(repo_root):
    return repo_root / "scripts" / "gpu_check.sh"


def test_gpu_check_without_cuda_says_so_in_one_line_and_prints_no_json(gpu_check, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: the check would measure it")
    import sys

    proc = subprocess.run(["bash", str(gpu_check)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr == ("gpu_check: no CUDA device (torch.cuda.is_available() is False): "
                           "nothing to measure\n")


FAKE_PYTHON = """#!/usr/bin/env bash
# A stand-in for python on a CUDA machine: every step answers at once.
case "$1" in
  -c) exit 0 ;;
  -) cat > /dev/null; echo '{"name": "Fake GPU", "torch": "x"}' ;;
  -m)
    if [[ " $* " == *" train "* && " $* " == *" --precision bf16 "* ]]; then
      echo "RuntimeError: bf16 went wrong" >&2; exit 1
    fi
    echo "Lightning chatter on stdout"
    echo '{"neural_playouts_per_s": 1000.0, "forward_states_per_s_batch_1024": 9.0, "plain_samples_per_s": 5.0}' ;;
  src/train.py)
    for a in "$@"; do
      case "$a" in
        hydra.run.dir=*) run=${a#hydra.run.dir=} ;;
        ckpt_path=*) run=$(dirname "$(dirname "${a#ckpt_path=}")") ;;
      esac
    done
    mkdir -p "$run/checkpoints" && touch "$run/checkpoints/last.ckpt"
    echo '{"rounds": 3, "games_played": 70, "train_steps": 48}' > "$run/result.json" ;;
  *) exec REAL "$@" ;;
esac
"""


@pytest.fixture
def fake_python(tmp_path):
    import sys

    path = tmp_path / "python"
    path.write_text(FAKE_PYTHON.replace("REAL", sys.executable))
    path.chmod(0o755)
    return path


def test_gpu_check_runs_every_step_and_records_a_failure_without_stopping(gpu_check, fake_python, tmp_path):
    import json

    proc = subprocess.run(["bash", str(gpu_check)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(fake_python)})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # one object, nothing else on stdout
    assert report["device"] == {"name": "Fake GPU", "torch": "x"}
    steps = report["steps"]
    assert list(steps) == ["device", "mcts_fp32", "mcts_tree_only", "mcts_bf16", "train_fp32", "train_bf16",
                           "belief_vit", "alphazero_2min", "alphazero_resume"]
    assert "--evaluator null" in steps["mcts_tree_only"]["command"]
    assert "--forward-batches 256 1024" in steps["mcts_fp32"]["command"]
    assert steps["train_bf16"]["rc"] == 1 and "bf16 went wrong" in steps["train_bf16"]["error"]
    assert steps["train_fp32"]["rc"] == 0 and steps["train_fp32"]["result"]["plain_samples_per_s"] == 5.0
    assert steps["alphazero_resume"]["result"]["rounds"] == 3
    assert "ckpt_path=" in steps["alphazero_resume"]["command"]
    summary = report["summary"]
    assert summary["forward_states_per_s_batch_1024_fp32"] == 9.0
    assert summary["train_plain_samples_per_s_bf16"] is None
    assert summary["steps_failed"] == ["train_bf16"] and summary["steps_skipped"] == []
    assert "train_bf16: exit 1" in proc.stderr


def test_gpu_check_skips_what_the_time_budget_cannot_hold(gpu_check, fake_python, tmp_path):
    import json

    proc = subprocess.run(["bash", str(gpu_check)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(fake_python), "GPU_CHECK_BUDGET": "10"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["summary"]["steps_skipped"]) == 9
    assert "of the 10 s budget left" in report["steps"]["mcts_fp32"]["skipped"]


def test_gpu_check_json_marks_a_timed_out_step(repo_root, tmp_path):
    import json
    import sys

    step = tmp_path / "steps" / "train_fp32"
    step.mkdir(parents=True)
    (step / "command").write_text("python -m stonelab.bench train\n")
    (step / "status").write_text("124 60 60\n")
    (step / "stderr").write_text("epoch 0\n")
    (tmp_path / "steps" / "mcts_fp32").mkdir()  # stopped before it wrote a status
    proc = subprocess.run([sys.executable, str(repo_root / "scripts" / "gpu_check_json.py"), str(tmp_path / "steps"),
                           "61", "440", "train_fp32", "mcts_fp32"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["steps"]
    assert steps["train_fp32"]["timed_out"] is True and steps["train_fp32"]["result"] is None
    assert steps["train_fp32"]["error"].startswith("timed out after 60 s")
    assert "no exit status" in steps["mcts_fp32"]["error"]


def test_score_swing_measures_the_shipped_score_net_on_a_real_game(repo_root):
    """scripts/score_swing.py on one KGS game: the line it prints, and a score that does not
    jump with the side to move (with the rank plane at 0 it jumped ~40 points a move)."""
    done = subprocess.run(["python", "scripts/score_swing.py", "--games", "1", "--moves", "6", "--visits", "8",
                           "--games-dir", "data/kgs"], cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = re.search(r"1 games x 7 turns, 8 visits, komi 7.5: median \|dScoreLead\| ([\d.]+)", done.stdout)
    assert found and float(found.group(1)) < 10, done.stdout
    missing = subprocess.run(["python", "scripts/score_swing.py", "--games-dir", "no/such/folder"], cwd=repo_root,
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr.startswith("error: no/such/folder") and "Traceback" not in missing.stderr
    no_nine = subprocess.run(["python", "scripts/score_swing.py", "--games-dir", "data/kgs", "--board-size", "9"],
                             cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert no_nine.returncode == 2 and "no even 9x9 game of 60 moves or more" in no_nine.stderr


def test_search_divergence_finds_a_search_that_follows_the_prior(repo_root):
    """scripts/search_divergence.py on real KGS positions: at a huge c_puct the visits follow the
    prior, so the searched move is the net's own in every position; a bad setting is one line."""
    done = subprocess.run(["python", "scripts/search_divergence.py", "--positions", "3", "--playouts", "16",
                           "--settings", "1000:none", "0.5:0.2"], cwd=repo_root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 positions, 16 playouts a move" in done.stdout
    assert re.search(r"c_puct 1000 fpu none +differs from the net 0\.00 ", done.stdout), done.stdout
    shares = re.findall(r"c_puct 0.5 fpu 0.2 +differs from the net ([\d.]+) +matches the game ([\d.]+)", done.stdout)
    assert len(shares) == 1 and all(0 <= float(x) <= 1 for x in shares[0])
    bad = subprocess.run(["python", "scripts/search_divergence.py", "--settings", "2:lots"], cwd=repo_root,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "expected c_puct:fpu_reduction such as 2:0.2" in bad.stderr
    assert "Traceback" not in bad.stderr


GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_final_score_vs_gnugo_compares_two_counted_kgs_games(repo_root):
    """scripts/final_score_vs_gnugo.py on the first two counted games of data/kgs, both ended
    with dead stones on the board: GNU Go's counts (its own final_score, W+3.5 and B+0.5),
    ours beside them, and the agreement line. The second is won by half a point: only the
    dame filled from the side to move gives GNU Go's winner."""
    done = subprocess.run(["python", "scripts/final_score_vs_gnugo.py", "--games-dir", "data/kgs", "--games", "2",
                           "--gnugo", f"{GNUGO} --mode gtp --chinese-rules"],
                          cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:-1]]
    assert [row[:3] for row in rows] == [["2015-01-01-18.sgf", "W+5.50", "W+3.5"], ["2015-01-05-33.sgf", "W+0.50", "B+0.5"]]
    assert [row[4] for row in rows] == ["yes", "yes"] and rows[1][3] == "B+0.5"
    assert done.stdout.splitlines()[-1].startswith("games=2 same_winner=2/2 (100.0%)")
    missing = subprocess.run(["python", "scripts/final_score_vs_gnugo.py", "--games-dir", "no/such/folder"],
                             cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and missing.stderr.startswith("error: no/such/folder") and "Traceback" not in missing.stderr


def test_score_calibration_reports_every_bucket_of_a_real_game(repo_root):
    """scripts/score_calibration.py without GNU Go on two counted data/kgs games: the buckets
    it prints hold both colours' turns (every 5th move) and their shares are fractions."""
    done = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", "data/kgs", "--games", "2"],
                          cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 counted 19x19 games of data/kgs") and lines[1].startswith("moves")
    first = lines[2].split()
    assert first[0] == "0-50" and int(first[1]) == 2 * 10  # moves 0, 5, ..., 45 of each game
    assert all(0 <= float(x) <= 1 for x in first[2:4])
    assert any(line.startswith("last position: the score names the winner in") for line in lines)
    missing = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", "no/such/folder"],
                             cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    value_only = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", "data/kgs", "--games", "1",
                                 "--ckpt", "models/go19_resnet6x64_kgs_piece3.ckpt"],
                                cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert value_only.returncode == 0, value_only.stderr  # a net without a score head: its win rate still counts
    assert "value head only" in value_only.stdout
    assert 0 <= float(value_only.stdout.splitlines()[3].split()[3]) <= 1
    searched = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", "data/kgs", "--games", "1",
                               "--visits", "4"], cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert searched.returncode == 0, searched.stderr
    assert "the search after 4 visits" in searched.stdout.splitlines()[0]
    assert searched.stdout.splitlines()[2].split()[:2] == ["0-50", "10"]  # the same positions, searched
    negative = subprocess.run(["python", "scripts/score_calibration.py", "--visits", "-1"],
                              cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert negative.returncode == 2 and "--visits -1" in negative.stderr and "Traceback" not in negative.stderr
    rolled = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", "data/kgs", "--games", "1",
                             "--skip-games", "1", "--rollouts", "1", "--every", "49", "--from-move", "200",
                             "--count-settled"], cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert rolled.returncode == 0, rolled.stderr
    assert ("the net (one visit) mixed with the count of the settled board and 1 policy rollouts"
            in rolled.stdout.splitlines()[0])
    assert not any(line.split()[0] in ("0-50", "50-100", "100-150", "150-200") for line in rolled.stdout.splitlines()[2:])
    negative = subprocess.run(["python", "scripts/score_calibration.py", "--rollouts", "-2"],
                              cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert negative.returncode == 2 and "--rollouts -2" in negative.stderr and "Traceback" not in negative.stderr
    alone = subprocess.run(["python", "scripts/score_calibration.py", "--gnugo-estimate-from", "150"],
                           cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert alone.returncode == 2 and "--gnugo-estimate-from needs --gnugo" in alone.stderr


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get update && apt-get install -y gnugo)")
def test_gnugo_games_writes_counted_games_the_calibration_reads(repo_root, tmp_path):
    """scripts/gnugo_games.py: two 9x9 games of GNU Go against itself, each counted by GNU Go
    (RE a margin), read back by scripts/score_calibration.py with the net resized to 9x9 and
    checked against GNU Go's own dead stones (its count of the last position is the RE)."""
    done = subprocess.run(["python", "scripts/gnugo_games.py", str(tmp_path), "--board-size", "9", "--games", "2",
                           "--komi", "7.5", "--gnugo", GNUGO], cwd=repo_root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    written = sorted(tmp_path.glob("gnugo_9x9_*.sgf"))
    assert len(written) == 2 and all(re.search(r"RE\[[BW]\+\d", p.read_text()) for p in written)
    calibrated = subprocess.run(["python", "scripts/score_calibration.py", "--games-dir", str(tmp_path),
                                 "--board-size", "9", "--gnugo", GNUGO, "--gnugo-estimate-from", "0"],
                                cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert calibrated.returncode == 0, calibrated.stderr
    assert "counted with GNU Go's dead stones: the winner in 2/2 games" in calibrated.stdout
    # from move 0 GNU Go estimates every position the buckets hold, beside the net on the same ones
    bucketed = sum(int(line.split()[1]) for line in calibrated.stdout.splitlines() if re.match(r"\d+-\d+ ", line))
    estimated = re.search(r"from move 0 on, (\d+) positions: GNU Go's estimate_score names the winner in ([\d.]+)",
                          calibrated.stdout)
    assert estimated and int(estimated.group(1)) == bucketed and 0 <= float(estimated.group(2)) <= 1
    assert re.search(r"ownership at the end agrees with GNU Go's final status on [\d.]+ of \d+", calibrated.stdout)
    swing = subprocess.run(["python", "scripts/score_swing.py", "--games-dir", str(tmp_path), "--board-size", "9",
                            "--games", "2", "--moves", "4", "--visits", "4"], cwd=repo_root, capture_output=True,
                           text=True, timeout=300)  # the 19x19 score net resized, turn to turn on 9x9
    assert swing.returncode == 0, swing.stderr
    assert re.search(r"^2 games x 5 turns, 4 visits, komi 7.5: median \|dScoreLead\| [\d.]+", swing.stdout), swing.stdout
    bad = subprocess.run(["python", "scripts/gnugo_games.py", str(tmp_path), "--board-size", "4"], cwd=repo_root,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "board_size=4" in bad.stderr and "Traceback" not in bad.stderr


def test_katrain_points_lost_through_katrain_s_own_classes(repo_root):
    """scripts/katrain_points_lost.py on the first 4 moves of one data/kgs game, through
    KaTrain's KataGoEngine and GameNode (skipped where KaTrain is not installed)."""
    pytest.importorskip("katrain.core.engine")
    done = subprocess.run(["python", "scripts/katrain_points_lost.py", "--games-dir", "data/kgs", "--games", "1",
                           "--moves", "4", "--visits", "8"], cwd=repo_root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    found = re.search(r"1 games x 4 moves, 8 visits, .*points lost median (-?[\d.]+)", done.stdout)
    assert found and abs(float(found.group(1))) < 10, done.stdout


def test_blunders_judges_only_the_named_players_own_moves(repo_root, tmp_path):
    """scripts/blunders.py on a two-game match journal: the random opening moves and the other
    player's moves are not judged (4 and 5 of 10 left), every judged move counts at threshold
    -1000 and none at +1000, and a wrong player or folder is one error line."""
    import json

    journal = tmp_path / "match" / "games.jsonl"
    journal.parent.mkdir()
    moves = ["D4", "Q16", "D16", "Q4", "C10", "R10", "K3", "K17", "pass", "O3"]
    records = [{"settings": {"board_size": 19, "opening_moves": 2}},
               {"black": "stonelab", "white": "GNU Go 3.8", "moves": moves},
               {"black": "GNU Go 3.8", "white": "stonelab", "moves": moves}]
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))

    def blunders(*args):
        return subprocess.run(["python", "scripts/blunders.py", *map(str, args), "--visits", "2"],
                              cwd=repo_root, capture_output=True, text=True, timeout=300)

    every = blunders(journal.parent, "--threshold", "-1000", "--out", tmp_path / "b.json")
    assert every.returncode == 0, every.stderr
    assert "2 games, 8 moves judged, 8 blunders (>= -1000 points): 100.00 per 100 moves" in every.stdout
    assert "1 of them passes (of 1 passes judged)" in every.stdout  # Black's pass at move 8
    result = json.loads((tmp_path / "b.json").read_text())["results"][str(journal.parent)]
    assert result["moves"] == 8 and result["blunders_per_game"] == [4, 4] and result["mean_points_lost"] is not None
    # Black passes at move 8, White plays O3 after it: as Black, one move left open; as White, one
    # move played on after the opponent's pass
    assert result["passes"] == {"opponent_moves_after_its_first_pass": {"median": 0.5, "mean": 0.5},
                                "its_moves_after_the_opponents_first_pass": {"median": 0.5, "mean": 0.5}}
    assert ", 0 blunders (>= 1000 points): 0.00 per 100 moves [0.00, 0.00]" in blunders(journal.parent, "--threshold", "1000").stdout
    # from move 6 on: moves 6 and 8 as Black, 7 and 9 as White; two arms of the same games, paired: ratio 1
    twin = tmp_path / "twin" / "games.jsonl"
    twin.parent.mkdir()
    twin.write_text(journal.read_text())
    late = blunders(journal.parent, twin.parent, "--from-move", "6", "--threshold", "-1000", "--paired")
    assert late.returncode == 0, late.stderr
    assert "2 games, 4 moves judged, 4 blunders" in late.stdout
    assert f"{twin.parent}: blunder rate / {journal.parent}'s: 1.0 (95%: [1.0, 1.0], paired by opening)" in late.stdout
    other = tmp_path / "other" / "games.jsonl"
    other.parent.mkdir()
    other.write_text("".join(json.dumps(r) + "\n" for r in records[:2] + [{**records[2], "moves": ["C3", *moves[1:]]}]))
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / "games.jsonl").write_text('{"settings": {}}\n{"black": "stonelab", "mov\n')
    for args, words in (([journal.parent, "--player", "pachi"], "no player named 'pachi'"),
                        ([garbled], "games.jsonl: not a match journal"),
                        ([tmp_path / "nothing"], "no games.jsonl"), ([], "give match folders or --kgs-dir"),
                        ([journal.parent, other.parent, "--paired"], "from the same openings and colours")):
        done = blunders(*args)
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_gomocup_move_seconds_times_a_brain_on_ladder_positions(repo_root, tmp_path):
    """scripts/gomocup_move_seconds.py: BOARD blocks give the side to move field 1, the brain
    answers every position with a move, and a file that is not a ladder.json is one line."""
    sys.path.insert(0, str(repo_root / "scripts"))
    try:
        from gomocup_move_seconds import board_block, positions
    finally:
        sys.path.remove(str(repo_root / "scripts"))
    assert board_block(8, [27, 28, 36]) == ["BOARD", "3,3,2", "4,3,1", "4,4,2", "DONE"]  # white to move
    game = [27, 28, 36, 35, 45, 44, 19, 20]
    ladder = {"game": "gomoku_8x8_c5", "rungs": [{"game_records": [{"moves": game}, {"moves": game[:6]}]}]}
    assert positions(ladder, 10) == [(8, game[:4]), (8, game[:6]), (8, game[:4])]
    (tmp_path / "ladder.json").write_text(json.dumps(ladder))
    done = subprocess.run(["python", "scripts/gomocup_move_seconds.py", str(tmp_path / "ladder.json"), "--", "protocol=gomocup",
                           "ckpt_path=models/gomoku8x8c5_alphazero_176min.ckpt", "search.playouts=20"],
                          cwd=repo_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 positions of" in done.stdout and re.search(r"seconds a move: median [\d.]+, mean [\d.]+, max", done.stdout)
    (tmp_path / "other.json").write_text('{"rungs": []}')
    bad = subprocess.run(["python", "scripts/gomocup_move_seconds.py", str(tmp_path / "other.json")], cwd=repo_root,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "not a ladder.json with game records" in bad.stderr and "Traceback" not in bad.stderr
    no_brain = subprocess.run(["python", "scripts/gomocup_move_seconds.py", str(tmp_path / "ladder.json"), "--",
                               "protocol=gomocup", "ckpt_path=no/such.ckpt"], cwd=repo_root, capture_output=True,
                              text=True, timeout=300)
    assert no_brain.returncode == 1 and "the brain did not start" in no_brain.stderr
    assert "Traceback" not in no_brain.stderr


def test_ladder_losses_finds_where_the_winner_had_a_forced_win(repo_root, tmp_path):
    """scripts/ladder_losses.py: each colour's score, and for a lost game the first ply at which
    the winner had a win by continuous threats (here an open three, then an open four: none
    while it had two stones, found once the three stood); a file that is not a ladder.json is one line."""
    point = lambda row, column: row * 15 + column  # noqa: E731
    moves = [point(7, 5), point(0, 0), point(7, 6), point(0, 2), point(7, 7), point(0, 4), point(7, 8),
             point(7, 9), point(7, 4)]
    ladder = {"game": "gomoku_15x15_c5", "rungs": [{"budget": 100, "game_records": [
        {"player_colour": -1, "result": -1, "moves": moves}, {"player_colour": 1, "result": 1, "moves": moves}]}]}
    (tmp_path / "ladder.json").write_text(json.dumps(ladder))
    done = subprocess.run(["python", "scripts/ladder_losses.py", str(tmp_path / "ladder.json")], cwd=repo_root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "max_node 100: as black 1/1, as white 0/1",
        "  game 0: ours white, lost in 9 plies; its win by continuous threats from ply 6, 3 plies before the end"]
    (tmp_path / "other.json").write_text('{"game": "gomoku_15x15_c5"}')
    bad = subprocess.run(["python", "scripts/ladder_losses.py", str(tmp_path / "other.json")], cwd=repo_root,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "not a ladder.json with game records" in bad.stderr and "Traceback" not in bad.stderr


def test_colour_strength_reports_blacks_results_per_komi(tmp_path, repo_root):
    games = {"a.sgf": b"(;GM[1]SZ[19]KM[6.5]BR[2d]WR[3d]RE[W+4.5];B[pd];W[dd])",
             "b.sgf": b"(;GM[1]SZ[19]KM[6.5]BR[5d]WR[5d]RE[B+1.5];B[pd];W[dd])",
             "c.sgf": b"(;GM[1]SZ[19]KM[0.5]BR[1d]WR[4d]RE[W+R];B[pd];W[dd])"}
    for name, data in games.items():
        (tmp_path / name).write_bytes(data)
    script = [sys.executable, str(repo_root / "scripts" / "colour_strength.py")]
    proc = subprocess.run([*script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.splitlines()[1].split()  # komi 6.5: the resigned 0.5-komi game is not counted
    assert row == ["6.5", "2", "-1.50", "0.500", "-0.50"], proc.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = subprocess.run([*script, str(empty)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: no counted even 19x19 game")
