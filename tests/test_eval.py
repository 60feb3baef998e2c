"""src/eval.py and the evaluation callback's checkpoint opponent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stonelab.pipeline import train


@pytest.fixture(scope="module")
def six_ckpt(tmp_path_factory, compose_train):
    root = tmp_path_factory.mktemp("six")
    train(compose_train(["logger=none"], root))
    return root / "checkpoints" / "last.ckpt"


@pytest.fixture
def run_eval(repo_root):
    """``run_eval(args, cwd)``: src/eval.py in a subprocess, writing into ``cwd``."""

    def run_eval(args, cwd):
        return subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "search.playouts=8",
                               f"paths.output_dir={cwd}", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=300)

    return run_eval


def test_match_against_pure_mcts_writes_result(six_ckpt, tmp_path, run_eval):
    proc = run_eval([f"ckpt_path={six_ckpt}", "games=4", "pure_playouts=20"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "match.json").read_text())
    assert result["games"] == 4 and result["game"] == "gomoku_6x6_c4"
    assert result["wins"] + result["draws"] + result["losses"] == 4
    assert result["ci_low"] <= result["win_ratio"] <= result["ci_high"]


def test_match_against_the_published_net_of_another_board_is_refused(six_ckpt, tmp_path, run_eval, repo_root):
    published = repo_root / "opponents" / "alphazero_gomoku" / "best_policy_8_8_5.model"
    proc = run_eval([f"ckpt_path={six_ckpt}", f"opponent={published}", "games=2"], tmp_path)
    assert proc.returncode == 2 and "AlphaZero_Gomoku's net for 8x8 Gomoku; this one plays" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_match_against_another_checkpoint(six_ckpt, tmp_path, run_eval):
    proc = run_eval([f"ckpt_path={six_ckpt}", f"opponent={six_ckpt}", "games=2"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "match.json").read_text())["opponent"].startswith("checkpoint:")


@pytest.mark.parametrize("args,message", [
    (["ckpt_path=/nonexistent.ckpt"], "ckpt_path=/nonexistent.ckpt: no such file"),
    ([], "ckpt_path=... is required"),
    (["games=0", "ckpt_path=X"], "games=0 must be >= 1"),
])
def test_user_errors(args, message, tmp_path, six_ckpt, run_eval):
    args = [a.replace("ckpt_path=X", f"ckpt_path={six_ckpt}") for a in args]
    proc = run_eval(args, tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_garbage_checkpoint_is_refused(tmp_path, run_eval):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint at all")
    proc = run_eval([f"ckpt_path={bad}"], tmp_path)
    assert proc.returncode == 2 and "is a text file, not a checkpoint" in proc.stderr


def test_training_can_evaluate_against_a_checkpoint(six_ckpt, tmp_path, compose_train):
    result = train(compose_train([f"callbacks.evaluation.opponent_checkpoint={six_ckpt}", "logger=none"],
                                 tmp_path))
    assert result["evaluations"][0]["opponent"] == f"checkpoint:{six_ckpt}"


def test_opponent_checkpoint_of_another_board_is_refused(six_ckpt, tmp_path, compose_train):
    from stonelab.cli import user_error

    with pytest.raises(Exception) as info:
        train(compose_train(["game=gomoku_8x8_c5", f"callbacks.evaluation.opponent_checkpoint={six_ckpt}",
                             "logger=none"], tmp_path))
    assert "board_size: checkpoint has 6, this run has 8" in str(user_error(info.value) or info.value)
    assert not (tmp_path / "checkpoints").exists()  # refused before any training


@pytest.mark.slow  # five eval.py runs; tests/models/test_checkpoints.py names the same mismatches
def test_a_checkpoint_of_the_other_game_answers_one_line(tmp_path, repo_root, tiny_alphazero_checkpoint,
                                                         tiny_maddison_checkpoint):
    az = tiny_alphazero_checkpoint(tmp_path / "az.ckpt")
    go = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    not_alphazero = (f"task=match plays alphazero checkpoints; {go} holds a maddison_cnn Go model (9x9): "
                     "score it with task=predict, or against GNU Go with task=gtp_match")
    not_gomoku = "is not a stonelab alphazero checkpoint of Gomoku: it holds a maddison_cnn Go model (9x9)"
    not_go = ("holds 'alphazero', not a Go move predictor (maddison_cnn, belief_vit): "
              "it is an alphazero Gomoku model (6x6, 4 in a row)")
    for args, words in [
        (["task=match", f"ckpt_path={go}"], not_alphazero),
        (["task=match", f"ckpt_path={az}", f"opponent={go}"], f"{go} {not_gomoku}"),
        (["task=predict", f"ckpt_path={az}", "data.sources=[x]"], f"{az} {not_go}"),
        (["task=inspect", f"ckpt_path={az}", "sgf=x.sgf", "move=1"], f"{az} {not_go}"),
        (["task=gtp_match", f"ckpt_path={az}"], f"{az} {not_go}"),
    ]:
        proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"),
                               f"paths.output_dir={tmp_path}", *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, (args, proc.stderr[-2000:])
        assert proc.stderr.strip().splitlines()[-1] == f"error: {words}", (args, proc.stderr)
        assert "Traceback" not in proc.stderr


@pytest.fixture
def compose_eval(compose_config):
    """``compose_eval(*overrides)``: the `eval` config as src/eval.py composes it."""
    return lambda *overrides: compose_config("eval", overrides)


def test_each_task_composes_only_its_own_settings(compose_eval):
    keys = {task: set(compose_eval(f"task={task}"))
            for task in ("match", "ladder", "predict", "inspect", "gtp_match", "tactics")}
    common = {"task_name", "ckpt_path", "seed", "device", "torch_threads", "paths", "task"}
    assert keys["match"] - common == {"search", "pruning", "games", "opponent", "opponent_playouts", "pure_playouts",
                                      "opening_moves", "gomocup", "rule"}
    assert keys["ladder"] - common == {"search", "pruning", "gomocup", "budgets", "games", "opening_moves", "rule"}
    assert keys["tactics"] - common == {"search", "pruning", "go", "playouts", "per_kind", "suite_seed", "win_length"}
    assert keys["predict"] - common == {"data", "symmetries"}
    assert keys["inspect"] - common == {"sgf", "move"}
    assert keys["gtp_match"] - common == {"symmetries", "gate", "search", "go", "pure_playouts", "games", "opponent_command", "judge_command",
                                          "komi", "max_moves", "opening_moves", "resign_below", "resign_moves",
                                          "cleanup_moves", "opponent_timeout", "sgf_dir", "bar"}
    assert all(compose_eval(f"task={task}").task == task for task in keys)


def test_the_gate_is_changed_from_the_command_line(compose_eval, compose_config):
    """``gate.enabled=false`` (as the configs' comments say) composes without a ``+``, and the
    settings left null keep the checkpoint's own."""
    from stonelab.models.alphazero_go import gate_with

    saved = {"enabled": True, "threshold": 0.2, "top_k": 5, "contested_weight": 1.0}
    for cfg in (compose_eval("task=gtp_match", "gate.enabled=false", "gate.threshold=0.3"),
                compose_config("play", ["gate.enabled=false", "gate.threshold=0.3"])):
        assert gate_with(saved, cfg.gate, "x.ckpt") == {**saved, "enabled": False, "threshold": 0.3}
    assert gate_with(saved, compose_eval("task=gtp_match").gate, "x.ckpt") == saved
    assert gate_with(None, compose_eval("task=gtp_match").gate, "cnn.ckpt") is None


def test_a_gomoku_brain_searches_as_the_brain_preset_unless_told_otherwise(compose_eval, compose_config):
    """The Gomocup brain (src/play.py protocol=gomocup) and the ladder against Rapfi search as
    conf/search/gomoku_brain.yaml by default, src/play.py with its 8 leaves a call; ``search=mcts``
    gives self-play's search back; Go's engines and task=match keep self-play's."""
    from stonelab.search.mcts import MCTSConfig

    brain = {"playouts": 1600, "c_puct": 2.0, "fpu_reduction": 0.2}
    play = compose_config("play", ["protocol=gomocup"]).search
    ladder = compose_eval("task=ladder").search
    assert {k: play[k] for k in brain} == {k: ladder[k] for k in brain} == brain
    assert (play.leaves_per_game, ladder.leaves_per_game) == (8, 1)
    assert MCTSConfig(**ladder).c_puct == 2.0
    self_play = {"playouts": 400, "c_puct": "auto", "fpu_reduction": "auto"}
    for search in (compose_config("play", ["protocol=gomocup", "search=mcts"]).search,
                   compose_config("play", ["search=mcts", "protocol=gomocup"]).search,
                   compose_eval("task=ladder", "search=mcts").search,
                   compose_config("play", []).search, compose_config("play", ["protocol=analysis"]).search,
                   compose_eval("task=match").search):
        assert {k: search[k] for k in self_play} == self_play
    assert compose_config("play", ["protocol=gomocup", "search.playouts=50"]).search.playouts == 50


def test_the_published_net_searches_as_its_own_player_whatever_ours(compose_eval):
    """AlphaZero_Gomoku's net as task=match's opponent keeps its player's c_puct 5, Q = 0 for
    unvisited moves and fresh trees, also when ours is the brain's search; another checkpoint
    searches as ours, at opponent_playouts."""
    from stonelab.eval_tasks.match import net_opponent_search
    from stonelab.search.mcts import MCTSConfig

    ours = MCTSConfig(playouts=1600, c_puct=2.0, fpu_reduction=0.2)
    published = net_opponent_search(ours, 400, "alphazero_gomoku:best_policy_8_8_5.model")
    assert (published.playouts, published.c_puct, published.fpu_reduction, published.reuse_tree) == (400, 5.0, None, False)
    assert net_opponent_search(ours, None, "models/other.ckpt") == ours
    assert net_opponent_search(ours, 100, "models/other.ckpt").playouts == 100


def test_readme_eval_commands_parse(repo_root, compose_eval):
    """Every `python src/eval.py ...` line of README.md and docs/*.md composes (tests/test_docs.py: all commands)."""
    import re
    import shlex

    pages = [repo_root / "README.md", *sorted((repo_root / "docs").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages).replace("\\\n", " ")
    commands = [line.strip() for line in text.splitlines() if line.strip().startswith("python src/eval.py")]
    assert len(commands) >= 10
    for command in commands:
        args = shlex.split(re.sub(r"<[^>]*>", "x", command.split("#")[0]))[2:]
        # an optional part, [key=value], is given; an elided value, key=..., is left out
        args = [re.sub(r"^\[(.*=.*)\]$", r"\1", arg) for arg in args]
        cfg = compose_eval(*[arg for arg in args if not arg.endswith("=...")])
        assert cfg.task in ("match", "ladder", "predict", "inspect", "gtp_match", "tactics") and cfg.ckpt_path, command
        if "opponent_command=" in command:
            # the whole engine command, one value (or our in-process pure MCTS)
            assert " " in cfg.opponent_command or cfg.opponent_command == "pure_mcts", command


def test_help_lists_the_tasks(tmp_path, repo_root):
    proc = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0
    assert "task: gtp_match, inspect, ladder, match, predict, tactics" in proc.stdout
    predict = subprocess.run([sys.executable, str(repo_root / "src" / "eval.py"), "task=predict", "--help"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300).stdout
    config = predict.split("== Config ==")[1]
    assert "split: auto" in config and "pure_playouts" not in config


def test_match_and_tactics_against_the_published_net(tmp_path, run_eval, repo_root):
    """The shipped 8x8 net against AlphaZero_Gomoku's at a few playouts each; then both scored on the tactics suite."""
    ours = repo_root / "models" / "gomoku8x8c5_alphazero_176min.ckpt"
    published = repo_root / "opponents" / "alphazero_gomoku" / "best_policy_8_8_5.model"
    proc = run_eval([f"ckpt_path={ours}", f"opponent={published}", "games=2", "opponent_playouts=4"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "match.json").read_text())
    assert result["opponent"].startswith("alphazero_gomoku:best_policy_8_8_5.model")
    assert result["playouts"] == 8 and result["opponent_playouts"] == 4 and result["opening_moves"] == 2
    assert result["black"]["games"] == result["white"]["games"] == 1
    assert [g["player_colour"] for g in result["game_records"]] == [1, -1]
    for path in (ours, published):
        proc = run_eval(["task=tactics", f"ckpt_path={path}", "per_kind=2", "playouts=[0,8]", "pruning=forced"],
                        tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        scores = json.loads((tmp_path / "tactics.json").read_text())["scores"]
        assert set(scores) == {"random move", "raw policy", "search 8"}
        # with forced moves the search never misses a win in one or a block of a four
        assert scores["search 8"]["win_in_1"] == scores["search 8"]["block_four"] == 1.0


def test_tactics_of_a_go_net_with_and_without_search(tmp_path, run_eval, tiny_maddison_checkpoint):
    ckpt = tiny_maddison_checkpoint(tmp_path / "go.ckpt")
    proc = run_eval(["task=tactics", f"ckpt_path={ckpt}", "per_kind=2", "playouts=[0,8]",
                     "go.leaf_value=playouts", "go.leaf_playouts=1"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "tactics.json").read_text())
    assert result["game"] == "go_9x9" and result["positions"] == dict.fromkeys(
        ("capture", "escape", "no_eye_fill", "no_pass"), 2)
    assert set(result["scores"]) == {"random move", "raw policy", "search 8"}
    assert result["scores"]["search 8"]["no_pass"] == 1.0  # the search never passes with points open
    assert "capture" in proc.stdout and "no_pass" in proc.stdout
    refused = run_eval(["task=tactics", f"ckpt_path={ckpt}", "per_kind=2", "pruning=forced"], tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "pruning.forced=True" in refused.stderr and "pruning.* are Gomoku's search settings and this plays Go" in refused.stderr
    refused = run_eval(["task=tactics", f"ckpt_path={ckpt}", "go.leaf_value=rollouts"], tmp_path)
    assert refused.returncode == 2 and "go.leaf_value='rollouts': choose one of auto, net" in refused.stderr


def test_predict_reads_by_default_the_games_training_reads(compose_eval, conf_dir):
    """task=predict's default sources and split settings are conf/data/kgs.yaml's, and `auto` knows them."""
    from omegaconf import OmegaConf

    from stonelab.eval_tasks.predict import is_training_sample

    training = OmegaConf.to_container(OmegaConf.load(conf_dir / "data" / "kgs.yaml"))  # unresolved: as written
    predict = OmegaConf.to_container(OmegaConf.load(conf_dir / "task" / "predict.yaml"))["data"]
    for key in ("sources", "val_games", "test_games", "split_seed"):
        assert predict[key] == training[key], key
    cfg = compose_eval("task=predict")
    assert cfg.data.split == "auto" and is_training_sample(list(cfg.data.sources), cfg.paths.root_dir)
    assert not is_training_sample(["elsewhere"], cfg.paths.root_dir)


@pytest.fixture
def sample_root(tmp_path, repo_root, save_checkpoint):
    """A project folder whose committed sample is 12 of the real games, and a tiny 19x19 maddison_cnn."""
    import shutil

    import torch

    from stonelab.games.go.rules import GoRules
    from stonelab.models.move_prediction import MovePredictionModule
    from stonelab.models.nets.maddison import MaddisonNet

    (tmp_path / "data" / "kgs").mkdir(parents=True)
    for sgf in sorted((repo_root / "data" / "kgs").glob("*.sgf"))[:12]:
        shutil.copy(sgf, tmp_path / "data" / "kgs" / sgf.name)
    torch.manual_seed(0)
    module = MovePredictionModule(MaddisonNet(36, 19, depth=2, filters=4), GoRules(19), encoder="maddison")
    return tmp_path, save_checkpoint(module, tmp_path / "go19.ckpt")


def test_predict_scores_the_samples_held_out_games_by_default(sample_root, compose_eval, capsys, caplog):
    import logging

    from stonelab.eval_tasks import run

    root, ckpt = sample_root
    base = ["task=predict", f"ckpt_path={ckpt}", f"paths.root_dir={root}", "data.cache_workers=1",
            "data.val_games=2", "data.test_games=3"]
    with caplog.at_level(logging.INFO, logger="stonelab.arena.progress"):
        out = run(compose_eval(*base, f"paths.output_dir={root / 'eval'}"))
    assert out["split"] == "test" and out["games"] == 3
    assert (out["val_games"], out["test_games"], out["split_seed"]) == (2, 3, 0)
    written = json.loads((root / "eval" / "predict.json").read_text())
    assert [k for k in written if k.startswith("top")] == ["top1", "top5", "top10"]
    printed = capsys.readouterr().out
    assert "on the 3 test games of" in printed and "held out of the committed sample's 12 games" in printed
    assert printed.index("top1") < printed.index("top5") < printed.index("top10")
    assert caplog.records[-1].message.startswith(f"predict: {out['positions_scored'] + out['passes_not_scored']:,} "
                                                 "positions in ")
    # data.split=all still scores every game; a split the sources cannot give is one line naming the way out.
    assert run(compose_eval(*base, "data.split=all", f"paths.output_dir={root / 'all'}"))["games"] == 12
    from stonelab.errors import ConfigError

    with pytest.raises(ConfigError, match=r"too few .*; data.split=all scores every game"):
        run(compose_eval(*base, "data.test_games=30", f"paths.output_dir={root / 'few'}"))
    with pytest.raises(ConfigError, match=r"data.split='every': choose auto, all, train, val or test"):
        run(compose_eval(*base, "data.split=every", f"paths.output_dir={root / 'bad'}"))


FAKE_GOMOCUP_BRAIN = Path(__file__).parent / "arena" / "fake_gomocup_brain.py"


@pytest.fixture(scope="module")
def fifteen_ckpt(tmp_path_factory, tiny_alphazero_checkpoint):
    """A seeded, untrained 15x15 five-in-a-row checkpoint: a board and line a Gomocup brain plays."""
    return tiny_alphazero_checkpoint(tmp_path_factory.mktemp("fifteen") / "fifteen.ckpt", 15, 5)


def test_match_and_ladder_against_a_gomocup_brain(fifteen_ckpt, tmp_path, compose_eval, capsys):
    """task=match opponent=gomocup and task=ladder, against the fake brain of tests/arena (its
    strength known by its max_node; the ladder's arithmetic is tested there)."""
    from stonelab.eval_tasks import run

    brain = [f"gomocup.command='{sys.executable} {FAKE_GOMOCUP_BRAIN} 10'", "gomocup.name=fake",
             f"ckpt_path={fifteen_ckpt}", "search.playouts=8"]
    out = run(compose_eval("task=match", "opponent=gomocup", "gomocup.max_node=3", "games=2", *brain,
                           f"paths.output_dir={tmp_path / 'match'}"))
    assert out["opponent"] == "gomocup:fake max_node 3" and out["gomocup"]["max_node"] == 3
    assert out["games"] == 2 and out["opening_moves"] == 2 and out["ci_low"] <= out["win_ratio"] <= out["ci_high"]
    assert "vs gomocup:fake max_node 3 (its own search): " in capsys.readouterr().out
    assert out["player_seconds_per_move"] > 0 and out["opponent_seconds_per_move"] > 0
    ladder = run(compose_eval("task=ladder", "budgets=[1,100]", "games=2", *brain,
                              f"paths.output_dir={tmp_path / 'ladder'}"))
    written = json.loads((tmp_path / "ladder" / "ladder.json").read_text())
    assert written["opponent"] == "fake" and [r["budget"] for r in written["rungs"]] in ([1], [1, 100])
    assert all(len(r["game_records"]) == 2 and r["ci_low"] <= r["win_ratio"] <= r["ci_high"] for r in written["rungs"])
    assert all(r["player_seconds_per_move"] > 0 and r["opponent_seconds_per_move"] > 0 for r in written["rungs"])
    for rung in written["rungs"]:  # each colour's score, counted from the game records
        for side, colour in (("black", 1), ("white", -1)):
            mine = [g["result"] for g in rung["game_records"] if g["player_colour"] == colour]
            assert (rung[side]["games"], rung[side]["wins"]) == (len(mine), mine.count(1)) == (1, rung[side]["wins"])
    printed = capsys.readouterr().out
    first = written["rungs"][0]
    assert ladder["even"]["text"] in printed and "max_node 1 thinking: " in printed
    assert f"as black {first['black']['wins']}/1, as white {first['white']['wins']}/1" in printed


def test_rule_plays_a_freestyle_model_under_renju_and_tells_the_brain(fifteen_ckpt, tmp_path, compose_eval):
    """rule=renju: the match is refereed and searched as renju (black never plays a forbidden
    point: the referee would end the game) and the brain hears INFO rule 4."""
    from stonelab.eval_tasks import run

    out = run(compose_eval("task=ladder", "budgets=[100]", "games=2", "rule=renju", "search.playouts=8",
                           f"gomocup.command='{sys.executable} {FAKE_GOMOCUP_BRAIN} 10'", "gomocup.name=fake",
                           f"ckpt_path={fifteen_ckpt}", f"paths.output_dir={tmp_path}"))
    assert out["game"] == "gomoku_15x15_c5_renju"
    assert all(len(g["moves"]) > 4 for g in out["rungs"][0]["game_records"])
    sent = (tmp_path / "gomocup_brain.stderr").read_text().splitlines()
    assert sent.count("INFO rule 4") == 2 and "INFO rule 0" not in sent


@pytest.mark.parametrize("rule, words", [
    ("caro", "rule='caro': choose freestyle, standard (exactly five) or renju, or null"),
    ("renju", "rule=renju: only a five-in-a-row Gomoku model plays under another rule set; "),
])
def test_a_rule_that_cannot_be_played_is_refused(six_ckpt, fifteen_ckpt, tmp_path, compose_eval, rule, words):
    from stonelab.errors import ConfigError
    from stonelab.eval_tasks import run

    ckpt = fifteen_ckpt if rule == "caro" else six_ckpt  # the 6x6 model plays four in a row
    with pytest.raises(ConfigError) as refused:
        run(compose_eval(f"ckpt_path={ckpt}", "games=2", f"rule={rule}", f"paths.output_dir={tmp_path}"))
    assert words in str(refused.value)


@pytest.mark.parametrize("args, words", [
    (["opponent=gomocup", "gomocup.command=/nonexistent/pbrain-rapfi"], "'/nonexistent/pbrain-rapfi' does not exist"),
    (["opponent=gomocup", "gomocup.command=python", "gomocup.max_node=0"], "gomocup.max_node=0 must be a whole number"),
    (["task=ladder", "gomocup.command=python", "budgets=[10,3]"], "budgets=[10, 3]: give rising whole numbers"),
])
def test_bad_gomocup_settings_are_refused_before_any_game(fifteen_ckpt, tmp_path, compose_eval, args, words):
    from stonelab.errors import ConfigError
    from stonelab.eval_tasks import run

    with pytest.raises(ConfigError) as refused:
        run(compose_eval(f"ckpt_path={fifteen_ckpt}", "games=2", *args, f"paths.output_dir={tmp_path}"))
    assert words in str(refused.value)


def test_a_brain_answering_garbage_is_one_line(fifteen_ckpt, tmp_path, run_eval):
    garbage = f"gomocup.command='python {FAKE_GOMOCUP_BRAIN} 10 garbage'"
    proc = run_eval([f"ckpt_path={fifteen_ckpt}", "games=2", "opponent=gomocup", garbage], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "failed in game 1 at move 4: protocol: answered 'hello there'" in proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr
