"""The evaluation callback's clock: time-to-strength survives a resume."""

from __future__ import annotations

import time

import pytest

from stonelab.callbacks.evaluation import Evaluation
from stonelab.search.mcts import MCTSConfig


def test_elapsed_time_continues_across_a_resume():
    first = Evaluation(MCTSConfig())
    first._fit_start = time.perf_counter() - 50.0  # 50 s into the first session
    state = first.state_dict()
    assert 50.0 <= state["elapsed_s"] < 51.0
    resumed = Evaluation(MCTSConfig())
    resumed.load_state_dict(state)
    assert resumed.elapsed() == state["elapsed_s"]  # before fit starts again: nothing added
    resumed._fit_start = time.perf_counter() - 10.0
    assert 60.0 <= resumed.elapsed() < 61.5
    # A checkpoint written before the clock existed resumes from 0.
    old = {k: v for k, v in state.items() if k != "elapsed_s"}
    fresh = Evaluation(MCTSConfig())
    fresh.load_state_dict(old)
    assert fresh.elapsed() == 0.0


def test_cpu_time_continues_across_a_resume():
    first = Evaluation(MCTSConfig())
    first._fit_cpu_start = time.process_time() - 40.0  # 40 CPU seconds into the first session
    state = first.state_dict()
    assert 40.0 <= state["cpu_s"] < 41.0
    resumed = Evaluation(MCTSConfig())
    resumed.load_state_dict(state)
    assert resumed.cpu_elapsed() == state["cpu_s"]
    resumed._fit_cpu_start = time.process_time() - 5.0
    assert 45.0 <= resumed.cpu_elapsed() < 46.5
    old = {k: v for k, v in state.items() if k != "cpu_s"}  # a checkpoint from before the CPU clock
    fresh = Evaluation(MCTSConfig())
    fresh.load_state_dict(old)
    assert fresh.cpu_elapsed() == 0.0


def test_final_evaluation_reserve_scales_with_the_opponent():
    evaluation = Evaluation(MCTSConfig(), pure_playouts=2000)
    assert evaluation.seconds_after_training() == 0.0  # nothing measured yet
    evaluation.history = [{"seconds": 30.0, "opponent_playouts": 1000}, {"seconds": 20.0, "opponent_playouts": 1000}]
    assert evaluation.seconds_after_training() == 60.0  # the longest match, against twice the playouts
    evaluation.at_train_end = False
    assert evaluation.seconds_after_training() == 0.0


def test_one_playout_opponent_plays_a_whole_run(tmp_path, compose_train):
    """pure_playouts=1 used to stop the first evaluation with "played the occupied point 0"."""
    from stonelab.pipeline import train

    result = train(compose_train(["callbacks.evaluation.pure_playouts=1", "logger=none"], tmp_path))
    assert sum(result["evaluations"][0][k] for k in ("wins", "draws", "losses")) == 2


def test_progress_text_names_the_latest_match():
    evaluation = Evaluation(MCTSConfig())
    assert evaluation.progress_text() == ""
    evaluation.history = [{"win_ratio": 0.7, "ci_low": 0.4, "ci_high": 0.89, "opponent": "pure_mcts_1000",
                           "round": 8}]
    assert evaluation.progress_text() == "eval 0.70 [0.40, 0.89] vs pure_mcts_1000 (round 8)"


def test_player_and_opponent_evaluators_are_built_once_in_the_trainer_precision():
    from types import SimpleNamespace

    from stonelab.games.gomoku.rules import GomokuRules
    from stonelab.models.alphazero import AlphaZeroModule
    from stonelab.models.nets.policy_value import PolicyValueNet

    module = AlphaZeroModule(PolicyValueNet(6), GomokuRules(6, 4))
    trainer = SimpleNamespace(precision="bf16-mixed")
    evaluation = Evaluation(MCTSConfig())
    evaluation._opponent_net = PolicyValueNet(6)
    player = evaluation._evaluator(trainer, module, "player")
    opponent = evaluation._evaluator(trainer, module, "opponent")
    assert player.net is module.net and opponent.net is evaluation._opponent_net
    assert player.precision == opponent.precision == "bf16"
    assert evaluation._evaluator(trainer, module, "player") is player
    assert evaluation._evaluator(trainer, module, "opponent") is opponent
    assert Evaluation(MCTSConfig(), precision=32)._evaluator(trainer, module, "player").precision == "32"


PASSING_GTP_ENGINE = """import sys
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    reply = {"name": "passer", "version": "1", "genmove": "pass", "known_command": "false"}.get(words[0], "")
    print("= " + reply + "\\n", flush=True)
    if words[0] == "quit":
        break
"""


def test_a_go_run_is_evaluated_against_a_gtp_engine_in_run(tmp_path, compose_train):
    import shlex
    import sys

    from stonelab.pipeline import train

    engine = tmp_path / "passer.py"
    engine.write_text(PASSING_GTP_ENGINE)
    command = shlex.join([sys.executable, str(engine)])
    result = train(compose_train(["game=go_9", "model.net.channels=[8]", "logger=none",
                                  f"callbacks.evaluation.opponent_command='{command}'"], tmp_path))
    (first, *_) = result["evaluations"]
    assert first["opponent"] == f"gtp:{command}" and first["opponent_playouts"] is None
    assert first["wins"] + first["draws"] + first["losses"] == 2


def test_a_gtp_opponent_is_refused_for_gomoku(tmp_path, compose_train):
    from stonelab.errors import ConfigError
    from stonelab.pipeline import train

    with pytest.raises(ConfigError, match="a GTP engine plays Go; this run plays gomoku"):
        train(compose_train(["callbacks.evaluation.opponent_command=gnugo", "logger=none"], tmp_path))
    with pytest.raises(ConfigError, match="give one of opponent_checkpoint, opponent_command and gomocup, not several"):
        Evaluation(MCTSConfig(), opponent_checkpoint=__file__, opponent_command="gnugo")


def test_a_gomoku_run_is_evaluated_against_a_gomocup_brain_in_run(tmp_path, compose_train, repo_root):
    import shlex
    import sys

    from stonelab.pipeline import train

    brain = shlex.join([sys.executable, str(repo_root / "tests" / "arena" / "fake_gomocup_brain.py")])
    result = train(compose_train(["game=gomoku_8x8_c5", "logger=none",
                                  f"callbacks.evaluation.gomocup={{command: '{brain}', name: fake, max_node: 3}}",
                                  "callbacks.evaluation.gomocup_ladder=[3,10]"],
                                 tmp_path))
    (first, *_) = result["evaluations"]
    assert first["opponent"] == "gomocup:fake max_node 3" and first["opponent_playouts"] is None
    assert first["wins"] + first["draws"] + first["losses"] == 2
    assert (tmp_path / "gomocup_brain" / "gomocup_brain.stderr").is_file()  # the brain's stderr stays with the run


def test_a_perfect_score_raises_the_gomocup_brain_to_its_next_rung_and_a_resume_keeps_it():
    ladder = {"gomocup": {"command": "python", "name": "rapfi", "max_node": 1}, "gomocup_ladder": [1, 3, 10]}
    evaluation = Evaluation(MCTSConfig(), **ladder)
    evaluation.best_win_ratio = 0.9
    evaluation.harder_after_perfect(0.9)
    assert evaluation.opponent_name() == "gomocup:rapfi max_node 1" and evaluation.best_win_ratio == 0.9
    evaluation.harder_after_perfect(1.0)
    assert evaluation.opponent_name() == "gomocup:rapfi max_node 3" and evaluation.best_win_ratio == -1.0
    resumed = Evaluation(MCTSConfig(), **ladder)
    resumed.load_state_dict(evaluation.state_dict())
    assert resumed.opponent_name() == "gomocup:rapfi max_node 3"
    for _ in range(2):
        resumed.harder_after_perfect(1.0)
    assert resumed.opponent_name() == "gomocup:rapfi max_node 10"  # the top rung stays
    fixed = Evaluation(MCTSConfig(), gomocup=ladder["gomocup"])
    fixed.harder_after_perfect(1.0)
    assert fixed.opponent_name() == "gomocup:rapfi max_node 1"


@pytest.mark.parametrize("settings, message", [
    ({"gomocup_ladder": [3, 10]}, r"gomocup_ladder=\[3, 10\] raises a Gomocup brain's max_node: it needs"),
    ({"gomocup": {"command": "python"}, "gomocup_ladder": [3]}, "with a max_node to start from"),
    ({"gomocup": {"command": "python", "max_node": 1}, "gomocup_ladder": [10, 3]}, "must be rising whole numbers"),
    ({"gomocup": {"command": "python", "max_node": 1}, "gomocup_ladder": [0, 3]}, "must be rising whole numbers"),
])
def test_a_gomocup_ladder_without_a_brain_or_not_rising_is_refused(settings, message):
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        Evaluation(MCTSConfig(), **settings)


def test_a_gomocup_opponent_is_refused_where_it_cannot_play(tmp_path, compose_train):
    from stonelab.errors import ConfigError
    from stonelab.pipeline import train

    with pytest.raises(ConfigError, match="a Gomocup brain plays Gomoku, five in a row; this match is gomoku_6x6_c4"):
        train(compose_train(["callbacks.evaluation.gomocup={command: python}", "logger=none"], tmp_path))
    with pytest.raises(ConfigError, match="callbacks.evaluation.gomocup.max_node=0 must be a whole number"):
        Evaluation(MCTSConfig(), gomocup={"command": "python", "max_node": 0})
    with pytest.raises(ConfigError, match="give one of opponent_checkpoint, opponent_command and gomocup"):
        Evaluation(MCTSConfig(), opponent_command="gnugo", gomocup={"command": "python"})
