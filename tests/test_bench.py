"""stonelab.bench: every suite runs and prints the documented keys."""

from __future__ import annotations

import json
import shutil

import pytest

from stonelab import bench


def test_mcts_suite_json_keys(capsys):
    code = bench.main(["mcts", "--json", "--board-size", "6", "--win-length", "4", "--games", "3",
                       "--parallel", "2", "--playouts", "8", "--pure-playouts", "50", "--seconds", "0.05", "--threads", "1"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for key in ["pure_playouts_per_s", "neural_playouts_per_s", "forward_states_per_s",
                "selfplay_games_per_hour", "neural_over_forward", "playouts_per_s_without_network"]:
        assert out[key] > 0, key
    assert out["game"] == "gomoku_6x6_c4"
    shares = [out[f"{part}_share_of_selfplay_time"] for part in ("network", "tree", "other")]
    assert all(0 < share < 1 for share in shares) and sum(shares) == pytest.approx(1.0)


@pytest.mark.parametrize("game", [["--board-size", "6", "--win-length", "4"], ["--game", "go_9"]])
def test_mcts_null_evaluator_times_the_tree_on_one_thread_beside_many(capsys, game):
    code = bench.main(["mcts", "--json", "--evaluator", "null", "--threads", "2", *game,
                       "--games", "4", "--parallel", "3", "--playouts", "8"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    one, two = out["tree_playouts_per_s_1_thread"], out["tree_playouts_per_s_2_threads"]
    assert one > 0 and two > 0 and out["tree_threads_speedup"] == two / one
    assert out["tree_threads"] == 2 and out["evaluator"] == "null"
    assert out["tree_threads_identical_games"] is True and out["tree_games"] >= 4
    assert "neural_playouts_per_s" not in out  # no network in this run


def test_mcts_bad_evaluator_is_a_clear_error(capsys):
    assert bench.main(["mcts", "--evaluator", "random"]) == 2
    assert "--evaluator 'random'" in capsys.readouterr().err


def test_bad_game_is_a_clear_error(capsys):
    assert bench.main(["mcts", "--board-size", "6", "--win-length", "7"]) == 2
    assert "game.win_length=7" in capsys.readouterr().err
    assert bench.main(["mcts", "--game", "go_9", "--win-length", "5"]) == 2
    assert "--win-length: conf/game/go_9.yaml has no win_length (its settings: board_size, komi" in capsys.readouterr().err
    assert bench.main(["mcts", "--game", "gomoku"]) == 2
    assert "--game 'gomoku': use one of conf/game/: connect4," in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["vit", "--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),
    (["mcts", "--playouts", "-3"], "argument --playouts: must be at least 1, got -3"),
    (["train", "--workers", "-1"], "argument --workers: must be at least 0, got -1"),
    (["train", "--steps", "ten"], "argument --steps: expected a whole number, got 'ten'"),
    (["mcts", "--seconds", "0"], "argument --seconds: must be more than 0, got 0"),
    (["mcts", "--forward-batches", "256", "0"], "argument --forward-batches: must be at least 1, got 0"),
])
def test_sizes_and_counts_below_their_least_are_refused_by_name(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_pruning_suite_reports_every_variant(capsys):
    code = bench.main(["pruning", "--json", "--parallel", "3", "--playouts", "16", "--threads", "1"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["none_candidate_reduction"] == 0.0
    for name in bench.pruning_variants():
        assert out[f"{name}_playouts_per_s"] > 0
        assert 0.0 <= out[f"{name}_candidate_reduction"] < 1.0
    assert out["local4_threat_candidate_reduction"] > out["local6_threat_candidate_reduction"] > 0


def test_mcts_suite_runs_go(capsys):
    code = bench.main(["mcts", "--json", "--game", "go_9", "--games", "1", "--parallel", "1", "--playouts", "2",
                       "--pure-playouts", "20", "--seconds", "0.05", "--threads", "1"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "go_9x9"
    for key in ["pure_playouts_per_s", "neural_playouts_per_s", "forward_states_per_s"]:
        assert out[key] > 0, key


@pytest.mark.parametrize("board_shape, num_planes, num_actions", [
    ((5, 5), 3, 25),  # one action per point but not Gomoku's 4 planes (a Hex-like game)
    ((6, 7), 5, 7),  # Connect Four: 7 column actions
    ((9, 9), 4, 82),  # a pass past the points
])
def test_the_benchmark_net_is_sized_by_the_game(board_shape, num_planes, num_actions):
    from types import SimpleNamespace

    import torch

    game = SimpleNamespace(board_shape=board_shape, num_planes=num_planes, num_actions=num_actions)
    log_policy, value = bench.untrained_net(game)(torch.zeros(2, num_planes, *board_shape))
    assert log_policy.shape == (2, num_actions) and value.shape == (2,)


def test_unknown_game_is_a_clear_error(capsys):
    assert bench.main(["mcts", "--game", "chess"]) == 2
    assert "--game 'chess'" in capsys.readouterr().err


def test_update_suite_times_one_thread_beside_many(capsys):
    code = bench.main(["update", "--json", "--board-size", "6", "--win-length", "4", "--batch-size", "16",
                       "--steps", "1", "--threads", "2"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seconds_per_update_1_thread"] > 0 and out["seconds_per_update_2_threads"] > 0
    assert out["speedup_of_threads"] == out["seconds_per_update_1_thread"] / out["seconds_per_update_2_threads"]


def test_engine_suite_reports_both_boards_and_every_leaf_value(capsys):
    code = bench.main(["engine", "--json", "--playouts", "4", "--depth", "2", "--filters", "4"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for n in (9, 19):
        for key in ("pure_playouts_per_s", "net_playouts_playouts_per_s", "net_none_playouts_per_s"):
            assert out[f"go{n}_{key}"] > 0, (n, key)


def test_engine_positions_are_reproducible_and_legal():
    from stonelab.games.go.rules import GoRules

    a, b = bench.engine_positions(GoRules(9), stones=8), bench.engine_positions(GoRules(9), stones=8)
    assert [s.hash for s in a] == [s.hash for s in b]
    assert a[0].move_number == 0 and all(s.move_number == 8 for s in a[1:])


def test_kgs_suite_times_the_cache_build_with_one_and_many_workers(capsys, repo_root, tmp_path):
    for f in sorted((repo_root / "data" / "kgs").glob("*.sgf"))[:6]:
        shutil.copy(f, tmp_path / f.name)
    assert bench.main(["kgs", "--json", "--sources", str(tmp_path), "--cache-workers", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 6 and out["cache_workers"] == 2
    assert out["cache_builds_identical"] is True
    one, many = out["cache_build_positions_per_s_1_worker"], out["cache_build_positions_per_s_all_workers"]
    assert one > 0 and many > 0 and out["cache_build_speedup"] == many / one
    assert out["maddison_positions_per_s_per_core"] > 0  # beside the featurization figures
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["kgs", "--sources", str(tmp_path), "--cache-workers", "0"])
    assert exit_info.value.code == 2
    assert "argument --cache-workers: must be at least 1, got 0" in capsys.readouterr().err


def test_mcts_suite_in_bf16_adds_the_forward_ceiling_at_each_batch(capsys):
    code = bench.main(["mcts", "--json", "--board-size", "6", "--win-length", "4", "--games", "2", "--parallel", "2",
                       "--playouts", "8", "--pure-playouts", "50", "--seconds", "0.05", "--threads", "1",
                       "--device", "cpu", "--precision", "bf16", "--forward-batches", "4", "16"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "cpu" and out["precision"] == "bf16"
    assert out["forward_states_per_s_batch_4"] > 0 and out["forward_states_per_s_batch_16"] > 0
    assert out["neural_playouts_per_s"] > 0


def test_train_suite_runs_bf16_on_a_device_and_keeps_its_cache(capsys, repo_root, tmp_path, cpu_bf16):
    sources = tmp_path / "sgf"
    sources.mkdir()
    for f in sorted((repo_root / "data" / "kgs").glob("*.sgf"))[:6]:
        shutil.copy(f, sources / f.name)
    code = bench.main(["train", "--json", "--sources", str(sources), "--depth", "2", "--filters", "8",
                       "--steps", "5", "--batch-size", "16", "--threads", "1", "--workers", "0",
                       "--device", "cpu", "--precision", "bf16", "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["device"] == "cpu" and out["precision"] == "bf16"
    for key in ("plain_samples_per_s", "lightning_samples_per_s", "streamed_samples_per_s"):
        assert out[key] > 0, key
    assert 0.0 <= out["data_wait_fraction"] < 1.0
    assert any((tmp_path / "cache").iterdir())  # the next run (the other precision) reuses it


def test_a_missing_cuda_device_is_a_clear_error(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    assert bench.main(["mcts", "--device", "cuda"]) == 2
    assert "--device cuda: no CUDA device here" in capsys.readouterr().err
    assert bench.main(["train", "--device", "tpu"]) == 2
    assert "--device 'tpu': use cpu, cuda, cuda:N or auto" in capsys.readouterr().err


def test_precision_suite_times_fp32_beside_bf16(capsys, cpu_bf16):
    assert bench.main(["precision", "--json", "--steps", "1", "--batch-size", "4", "--threads", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seconds_per_update_fp32"] > 0 and out["seconds_per_update_bf16"] > 0
    assert out["bf16_speedup"] == out["seconds_per_update_fp32"] / out["seconds_per_update_bf16"]
    assert set(out["cpu_bf16_flags"]) <= {"avx512_bf16", "amx_bf16"} and out["device"] == "cpu"
    assert out["net"] == "resnet 3 blocks x 64, value head"
    assert bench.main(["precision", "--json", "--steps", "1", "--batch-size", "2", "--threads", "1", "--blocks", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["net"] == "resnet 2 blocks x 64, value head"


def test_vit_suite_times_the_encoder_whole_beside_in_slices(capsys):
    assert bench.main(["vit", "--json", "--steps", "1", "--batch-size", "20", "--threads", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["forward_batch"] == 20 and out["update_batch"] == 128 and out["encoder_slice"] == 16
    for mode in ("forward", "update"):
        assert out[f"{mode}_speedup"] == out[f"{mode}_seconds_whole"] / out[f"{mode}_seconds_sliced"] > 0
    import torch

    from stonelab.models.nets import belief_vit

    assert belief_vit.ENCODER_CHUNK == 16 and torch.backends.mha.get_fastpath_enabled()  # restored
