"""src/train.py, eval.py, play.py: Hydra's own errors as one line, and --help per entry point."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.fixture
def run_entry_point(repo_root, tmp_path):
    """``run_entry_point(script, *args, env=...)``: src/<script>.py in a subprocess, in tmp_path."""

    def run(script, *args, env=None):
        quiet_env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "STONELAB_TRACEBACK")}
        return subprocess.run([sys.executable, str(repo_root / "src" / f"{script}.py"), *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**quiet_env, **(env or {})})

    return run


@pytest.mark.parametrize("script, args, message", [
    ("train", ["model=beliefvit"],
     "model=beliefvit: no such option of group model (choose alphazero, belief_vit, maddison_cnn); "
     "did you mean belief_vit?"),
    ("train", ["trainer.max_epoch=1"],
     "trainer.max_epoch is not a setting; did you mean trainer.max_epochs? (a new key needs a leading +)"),
    ("train", ["traner.max_epochs=1"],
     "traner.max_epochs is not a setting; did you mean trainer.max_epochs? (a new key needs a leading +)"),
    ("train", ["foo=1"], "foo is not a setting; a new key needs a leading +: +foo=1"),
    ("train", ["+trainer.max_epochs=1"],
     "trainer.max_epochs is already a setting; drop the +: trainer.max_epochs=1 "
     "(++trainer.max_epochs=1 adds or overrides)"),
    ("train", ["trainer.max_epochs=[1"], "cannot read 'trainer.max_epochs=[1': no viable alternative"),
    # the other ways of running compose the same config, and answer the same way
    ("train", ["--cfg", "job", "trainer.max_epoch=1"], "trainer.max_epoch is not a setting; did you mean"),
    ("train", ["model=beliefvit", "--help"], "model=beliefvit: no such option of group model"),
    ("train", ["-m", "model=beliefvit,alphazero"], "model=beliefvit: no such option of group model"),
    ("eval", ["task=mach"],
     "task=mach: no such option of group task (choose gtp_match, inspect, ladder, match, predict, tactics); "
     "did you mean match?"),
    ("play", ["search.playout=1"],
     "search.playout is not a setting; did you mean search.playouts? (a new key needs a leading +)"),
    # Go's leaf value moved from the generic search to Go's own group
    ("play", ["search.go_value=mixed"],
     "search.go_value is now go.leaf_value (Go's own search settings, conf/go/default.yaml): go.leaf_value=mixed"),
])
def test_config_errors_answer_one_line(script, args, message, run_entry_point):
    proc = run_entry_point(script, *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {message}") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "search path" not in proc.stderr.lower()


@pytest.mark.parametrize("env", [{"HYDRA_FULL_ERROR": "1"}, {"STONELAB_TRACEBACK": "1"}])
def test_developers_still_see_hydras_whole_report(env, run_entry_point):
    proc = run_entry_point("train", "model=beliefvit", env=env)
    assert proc.returncode == 1
    assert "Config search path" in proc.stderr
    assert not proc.stderr.startswith("error: ")


def group_lines(help_text: str) -> list[str]:
    """The ``group: option, ...`` lines between the groups heading and the config."""
    groups = help_text.split("== Config ==")[0].split("groups ==")[1]
    return [line.split(":")[0] for line in groups.splitlines() if ": " in line]


def test_train_help_lists_trains_groups_only(run_entry_point):
    proc = run_entry_point("train", "--help")
    assert proc.returncode == 0, proc.stderr
    groups = group_lines(proc.stdout)
    assert "task" not in groups and "gtp_match" not in proc.stdout
    assert {"model", "model/net", "game", "trainer", "experiment"} <= set(groups)


def test_eval_and_play_help_list_their_own_groups(run_entry_point):
    assert set(group_lines(run_entry_point("eval", "task=predict", "--help").stdout)) == {"paths", "task"}
    assert set(group_lines(run_entry_point("play", "--help").stdout)) == {"go", "protocol", "pruning", "search"}
