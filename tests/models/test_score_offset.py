"""python -m stonelab.models.score_offset: the score head's favour to the side to move, taken out."""

import pytest
import torch

from stonelab.models.score_offset import OFFSET_KEY, SCORE_BIAS, main, measure, remove_offset


def test_the_offset_taken_out_leaves_no_mean_points_lost(tmp_path, repo_root, tiny_maddison_checkpoint, one_thread):
    source = str(tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True))
    games = str(repo_root / "data" / "kgs")
    before = measure(source, games, games=3, moves=30)
    assert before["games"] == 3 and before["moves"] == 90 and before["points"] != 0
    summary = remove_offset(source, str(tmp_path / "fixed.ckpt"), before)
    after = measure(str(tmp_path / "fixed.ckpt"), games, games=3, moves=30)
    assert abs(after["points"]) < 0.01, (before, after)  # the shift is exact: the mean drop goes to 0
    fixed = torch.load(tmp_path / "fixed.ckpt", weights_only=True)
    old = torch.load(source, weights_only=True)
    assert fixed["stonelab"][OFFSET_KEY]["points"] == summary["points"] == before["points"]
    changed = [k for k in old["state_dict"] if not torch.equal(old["state_dict"][k], fixed["state_dict"][k])]
    assert changed == [SCORE_BIAS]


def test_a_net_without_a_score_head_is_refused_by_name(tmp_path, repo_root, tiny_maddison_checkpoint, capsys):
    source = str(tiny_maddison_checkpoint(tmp_path / "plain.ckpt"))
    assert main([source, str(tmp_path / "out.ckpt"), "--games-dir", str(repo_root / "data" / "kgs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "has no score head" in err and not (tmp_path / "out.ckpt").exists()


def test_no_games_is_a_clear_error(tmp_path, tiny_maddison_checkpoint, capsys):
    source = str(tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True))
    (tmp_path / "empty").mkdir()
    assert main([source, str(tmp_path / "out.ckpt"), "--games-dir", str(tmp_path / "empty")]) == 2
    assert "error: " in capsys.readouterr().err


@pytest.mark.parametrize("points", [0.5, -1.25])
def test_a_second_pass_adds_to_the_first(tmp_path, tiny_maddison_checkpoint, points):
    source = str(tiny_maddison_checkpoint(tmp_path / "aux.ckpt", aux_heads=True))
    once = remove_offset(source, str(tmp_path / "once.ckpt"), {"points": 1.0})
    twice = remove_offset(str(tmp_path / "once.ckpt"), str(tmp_path / "twice.ckpt"), {"points": points})
    assert once["points"] == 1.0 and twice["points"] == round(1.0 + points, 3)


def test_the_shipped_score_net_gives_the_side_to_move_no_edge(repo_root, one_thread):
    """The aux net before its offset was taken out gave the mover ~1.3 points (KaTrain's
    median points lost -2.9 over held-out games); now the mean drop is near 0."""
    shipped = str(repo_root / "models" / "go19_resnet3x64_kgs_aux.ckpt")
    edge = measure(shipped, str(repo_root / "data" / "kgs"), games=6, moves=80)
    assert abs(edge["points"]) < 0.6, edge
    assert torch.load(shipped, weights_only=True)["stonelab"][OFFSET_KEY]["points"] == 1.272
