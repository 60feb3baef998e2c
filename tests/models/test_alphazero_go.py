"""stonelab.models.alphazero_go: an AlphaZero Go checkpoint as a Go player (GTP, arena)."""

from __future__ import annotations

import numpy as np
import pytest

from stonelab.errors import StonelabError
from stonelab.games.go.rules import GoRules, state_from_rows
from stonelab.games.go.search import NUM_PLANES
from stonelab.models.alphazero_go import AlphaZeroGoModel, go_model_from_checkpoint
from stonelab.models.inference import MovePredictor


@pytest.fixture
def go_az(tmp_path, tiny_alphazero_go_checkpoint):
    return tiny_alphazero_go_checkpoint(tmp_path / "az_go.ckpt")


def test_a_go_checkpoint_loads_as_the_player_of_its_own_game(go_az, tmp_path, tiny_maddison_checkpoint,
                                                               tiny_alphazero_checkpoint):
    model = go_model_from_checkpoint(str(go_az))
    assert isinstance(model, AlphaZeroGoModel) and model.rules == GoRules(9, komi=7.0)
    assert isinstance(go_model_from_checkpoint(str(tiny_maddison_checkpoint(tmp_path / "cnn.ckpt"))), MovePredictor)
    gomoku = tiny_alphazero_checkpoint(tmp_path / "gomoku.ckpt")
    with pytest.raises(StonelabError, match="it is an alphazero Gomoku model"):
        go_model_from_checkpoint(str(gomoku))
    with pytest.raises(StonelabError, match="holds 'alphazero' on Go, not a Go move predictor"):
        MovePredictor.from_checkpoint(str(go_az))  # task=predict / inspect need a move predictor


def test_priors_cover_legal_moves_and_the_pass_and_search_free_play_keeps_its_eyes(go_az):
    model = go_model_from_checkpoint(str(go_az))
    # Black to move; A9 (point 0) is black's own eye, B9 and A8 are black stones.
    state = state_from_rows([".X.......", "X........", *["........."] * 7], to_play=1)
    assert model.planes([state]).shape == (1, NUM_PLANES, 9, 9)
    probs = model.probabilities([state])
    assert probs.shape == (1, 82) and probs[0, 1] == 0 and probs[0, 9] == 0  # occupied
    np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-5)
    assert probs[0, 81] > 0  # the pass has a prior
    only_the_eye = state_from_rows(["." + "X" * 8, *["X" * 9] * 8], to_play=1)
    assert model.play_moves([only_the_eye])[0] == 81  # passes rather than fill its last eye
    assert -1 <= model.values([state])[0] <= 1


def test_it_plays_over_gtp_with_and_without_search(go_az):
    from stonelab.arena.gtp_match import model_player

    model = go_model_from_checkpoint(str(go_az))
    for search in ({"playouts": 0}, {"playouts": 24, "leaves_per_game": 4}):
        with model_player(model, search) as engine:
            engine.send("boardsize 9")
            engine.send("clear_board")
            first = engine.send("genmove b")
            engine.send("genmove w")
            assert first and first.lower() != "resign"
            if search["playouts"]:
                assert engine.engine.player.mcts.simulations >= 24
    with pytest.raises(StonelabError, match="searches with its value output"):
        model_player(model, {"playouts": 8, "go": {"leaf_value": "playouts"}})


def test_go_and_gomoku_alphazero_checkpoints_are_refused_by_each_others_tasks(go_az, tmp_path,
                                                                               tiny_alphazero_checkpoint):
    from stonelab.games.gomoku.rules import GomokuRules
    from stonelab.models import checkpoints
    from stonelab.models.alphazero import alphazero_identity

    gomoku = tiny_alphazero_checkpoint(tmp_path / "gomoku.ckpt")
    with pytest.raises(StonelabError) as info:  # task=match, protocol=gomocup: Gomoku only
        checkpoints.load(str(go_az), game="gomoku")
    assert str(info.value) == f"{go_az} is not a stonelab alphazero checkpoint of Gomoku: it holds an alphazero Go model (9x9)"
    with pytest.raises(StonelabError, match="it is an alphazero Gomoku model"):  # task=gtp_match: Go only
        checkpoints.load(str(gomoku), game="go")
    with pytest.raises(StonelabError, match=r"holds an alphazero Go model \(9x9\), this run has an alphazero Gomoku"):
        checkpoints.check_file(str(go_az), alphazero_identity(GomokuRules(6, 4)))
    with pytest.raises(StonelabError, match="komi"):  # a Go run of another komi
        checkpoints.check_file(str(go_az), alphazero_identity(GoRules(9, komi=5.5)))


def test_a_net_with_go_heads_gives_its_ownership_and_searches_with_score_utility(tmp_path,
                                                                                 tiny_alphazero_go_checkpoint):
    from stonelab.games.go.players import go_search_player

    model = go_model_from_checkpoint(str(tiny_alphazero_go_checkpoint(tmp_path / "aux.ckpt", aux_heads=True)))
    state = GoRules(9, komi=7.0).new_state()
    owner = model.outputs([state]).belief_map
    assert owner.shape == (1, 9, 9) and owner.abs().max() <= 1
    import torch

    with torch.no_grad():
        direct = model.net.heads(torch.from_numpy(model.planes([state])))["ownership"].reshape(1, 9, 9)
    torch.testing.assert_close(owner, direct, atol=1e-4, rtol=1e-4)
    player = go_search_player(model, {"playouts": 8, "score_utility": 0.5})
    player.sync(state)
    player.search()
    assert model.evaluate.score_utility == 0.5 and player.root_visit_total >= 8
    plain = go_model_from_checkpoint(str(go_az_path := tiny_alphazero_go_checkpoint(tmp_path / "plain.ckpt")))
    assert plain.outputs([state]).belief_map is None and go_az_path.is_file()
    with pytest.raises(StonelabError, match="needs a net with a score head"):
        go_search_player(plain, {"playouts": 8, "score_utility": 0.5})
