"""data=kgs: game cache, split by game, streaming shards, symmetries, downloads, errors."""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from stonelab.data import kgs
from stonelab.data.kgs import KGSDataModule, split_games
from stonelab.errors import ConfigError, StonelabError
from stonelab.features.maddison import OFFSETS

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "kgs"


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory) -> Path:
    """24 committed sample games (including handicap games) in a folder of their own."""
    folder = tmp_path_factory.mktemp("sgf")
    for f in sorted(SAMPLE.glob("*.sgf"))[:24]:
        shutil.copy(f, folder / f.name)
    return folder


def module(games_dir, tmp_path, **kw) -> KGSDataModule:
    args = dict(cache_dir=str(tmp_path / "cache"), val_games=4, test_games=4, batch_size=32,
                shuffle_buffer=256)
    args.update(kw)
    return KGSDataModule([str(games_dir)], **args)


def test_cache_is_built_once_and_reused(games_dir, tmp_path, capsys):
    dm = module(games_dir, tmp_path)
    dm.prepare_data()
    folders = list((tmp_path / "cache").iterdir())
    assert len(folders) == 1
    summary = json.loads((folders[0] / "summary.json").read_text())
    assert summary["games_cached"] == 24
    assert summary["cache_bytes_per_position"] < 8  # games, not planes: ~2 bytes a position
    stamp = (folders[0] / "moves.npy").stat().st_mtime_ns
    KGSDataModule([str(games_dir)], cache_dir=str(tmp_path / "cache")).prepare_data()
    assert (folders[0] / "moves.npy").stat().st_mtime_ns == stamp
    # Another encoder reads the same cache (features are computed on the fly) ...
    other = KGSDataModule([str(games_dir)], encoder="simple4", cache_dir=str(tmp_path / "cache"))
    assert other.cache_folder() == folders[0]
    # ... but other sources get their own.
    one = KGSDataModule([str(sorted(games_dir.glob("*.sgf"))[0])], cache_dir=str(tmp_path / "cache"))
    assert one.cache_folder() != folders[0]


def test_cache_replays_the_sgf_moves(games_dir, tmp_path):
    from stonelab.data.sgf import load_games

    dm = module(games_dir, tmp_path)
    dm.setup()
    records = load_games([str(games_dir)]).games
    for g, record in enumerate(records):
        black, white, moves = dm.cache.game(g)
        assert list(moves) == [p for _, p in record.moves]
        assert tuple(black) == record.setup_black and tuple(white) == record.setup_white
        assert dm.cache.first_player[g] == record.first_player
        assert dm.cache.winner[g] == record.winner


def test_splits_are_disjoint_games():
    splits = split_games(100, 10, 5, seed=3)
    assert [len(splits[k]) for k in ("train", "val", "test")] == [85, 10, 5]
    union = np.concatenate(list(splits.values()))
    assert len(np.unique(union)) == 100
    again = split_games(100, 10, 5, seed=3)
    assert all(np.array_equal(splits[k], again[k]) for k in splits)


def test_evaluation_stream_reads_every_position_once(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    ds = dm.dataset("val")
    targets = torch.cat([b["target"] for b in ds])
    assert len(targets) == ds.positions
    moves = [dm.cache.game(int(g))[2] for g in dm.splits["val"]]
    assert targets.tolist() == [int(m) for game in moves for m in game]


def test_move_number_counts_the_moves_before_each_position(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    ds = dm.dataset("val")
    numbers = torch.cat([b["move_number"] for b in ds]).tolist()
    lengths = [len(dm.cache.game(int(g))[2]) for g in dm.splits["val"]]
    assert numbers == [i for length in lengths for i in range(length)]
    # A symmetry turns the board, not the game's clock.
    batch = next(iter(ds))
    k = len(batch["target"])
    ds.augment = True
    out = ds._finish(batch["planes"].numpy().copy(), batch["target"].numpy().copy(), batch["value"].numpy().copy(),
                     batch["to_play"].numpy().copy(), k, np.random.default_rng(0),
                     move_numbers=batch["move_number"].numpy().copy())
    assert torch.equal(out["move_number"], batch["move_number"])
    assert not torch.equal(out["planes"], batch["planes"])


def test_workers_split_the_games_and_yield_equal_counts(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4", num_workers=2)
    dm.setup()
    loader = dm.train_dataloader()
    batches = list(loader)
    sizes = [len(b["target"]) for b in batches]
    assert len(batches) == len(loader)
    per_worker = dm.dataset("train").samples_per_reader(2)
    assert sum(sizes) == 2 * per_worker


def test_lightning_takes_the_workers_length_without_its_warning(games_dir, tmp_path):
    """Each reader shards the games itself, so __len__ is exact: Lightning's caution about it is filtered."""
    import warnings

    from lightning.pytorch.strategies import SingleDeviceStrategy
    from lightning.pytorch.utilities.data import has_len_all_ranks

    dm = module(games_dir, tmp_path, encoder="simple4", num_workers=1)
    dm.setup()

    def warned(loader) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # even a warning this process saw before
            assert has_len_all_ranks(loader(), SingleDeviceStrategy("cpu"))
        return [str(w.message) for w in caught if "__len__" in str(w.message)]

    plain = dm.train_dataloader()
    assert warned(lambda: plain)  # Lightning still says it of the loader ...
    assert not warned(dm.train_dataloader)  # ... but not once the data module has made it
    assert len(plain) == sum(1 for _ in plain)  # and the length it cautions about is exact


def test_training_batches_shapes_and_symmetries(games_dir, tmp_path):
    dm = module(games_dir, tmp_path)
    dm.setup()
    batch = next(iter(dm.train_dataloader()))
    planes, targets, values = batch["planes"], batch["target"], batch["value"]
    assert set(batch["to_play"].unique().tolist()) <= {-1, 1}
    assert planes.shape == (32, 36, 19, 19) and planes.dtype == torch.uint8
    assert targets.dtype == torch.int64 and values.shape == (32,)
    assert set(values.unique().tolist()) <= {-1.0, 0.0, 1.0}
    # Whatever symmetry was drawn, the expert's move lands on a legal empty point.
    flat = planes.reshape(32, 36, -1)
    for i, t in enumerate(targets.tolist()):
        if t < 361:
            assert flat[i, OFFSETS["stones"] + 2, t] == 1  # empty
            assert flat[i, OFFSETS["legal"], t] == 1


def test_augmentation_moves_target_with_the_stones(games_dir, tmp_path):
    from stonelab.games.symmetry import transform_planes

    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    ds = dm.dataset("val")
    batch = next(iter(ds))
    planes, targets = batch["planes"], batch["target"]
    ds.augment = True
    rng = np.random.default_rng(0)
    out = ds._finish(planes.numpy().copy(), targets.numpy().copy(), batch["value"].numpy().copy(),
                     batch["to_play"].numpy().copy(), len(targets), rng)
    aug_planes, aug_targets = out["planes"], out["target"]
    syms = np.random.default_rng(0).integers(8, size=len(targets))
    for i in range(len(targets)):
        expected = transform_planes(planes[i].numpy(), int(syms[i]))
        np.testing.assert_array_equal(aug_planes[i].numpy(), expected)
        if targets[i] < 361:
            one_hot = np.zeros(361, np.uint8)
            one_hot[targets[i]] = 1
            moved = transform_planes(one_hot.reshape(1, 19, 19), int(syms[i])).reshape(-1)
            assert aug_targets[i] == int(np.flatnonzero(moved)[0])
        else:
            assert aug_targets[i] == 361


def test_reads_u_go_net_archives_as_downloaded(tmp_path):
    archive = tmp_path / "KGS-2099-19-3-.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for f in sorted(SAMPLE.glob("*.sgf"))[:3]:
            tar.add(f, arcname=f"kgs-19-2099/{f.name}")
    dm = KGSDataModule([str(archive)], cache_dir=str(tmp_path / "cache"), val_games=1, test_games=1)
    dm.setup()
    assert dm.cache.num_games == 3


def test_download_from_the_index_page(tmp_path):
    # The u-go.net page lists archives as <a href="...tar.gz">; a file:// copy stands in here.
    site = tmp_path / "site"
    site.mkdir()
    archive = site / "KGS-2099-19-2-.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for f in sorted(SAMPLE.glob("*.sgf"))[:2]:
            tar.add(f, arcname=f"kgs-19-2099/{f.name}")
    (site / "index.html").write_text(
        '<html><a href="KGS-2099-19-2-.tar.gz">.tar.gz</a> <a href="other.zip">zip</a></html>')
    urls = kgs.ugo_archive_urls((site / "index.html").as_uri())
    assert urls == [archive.as_uri()]
    paths = kgs.download(urls, tmp_path / "downloads")
    assert paths[0].read_bytes() == archive.read_bytes()
    stamp = paths[0].stat().st_mtime_ns
    kgs.download(urls, tmp_path / "downloads")  # already there: not fetched again
    assert paths[0].stat().st_mtime_ns == stamp
    # A URL in data.sources is downloaded, then read like any archive.
    local = kgs.resolve_sources([archive.as_uri()], tmp_path / "dl2")
    assert local[0].read_bytes() == archive.read_bytes()


def test_bad_input_is_named(games_dir, tmp_path):
    with pytest.raises(ConfigError, match="data.encoder='alphago'"):
        KGSDataModule([str(games_dir)], encoder="alphago")
    with pytest.raises(ConfigError, match="data.sources is empty"):
        kgs.resolve_sources([], tmp_path)
    with pytest.raises(StonelabError, match="no such file"):
        KGSDataModule([str(tmp_path / "nope")], cache_dir=str(tmp_path / "c")).prepare_data()
    with pytest.raises(ConfigError, match="too few"):
        module(games_dir, tmp_path, val_games=20, test_games=10).setup()
    with pytest.raises(StonelabError, match="cannot download"):
        kgs.download([(tmp_path / "missing.tar.gz").as_uri()], tmp_path / "dl")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.sgf").write_text("not an sgf")
    with pytest.raises(StonelabError, match="no usable 19x19 games"):
        KGSDataModule([str(junk)], cache_dir=str(tmp_path / "c2")).prepare_data()
    with pytest.raises(ConfigError, match="data.cache_workers=0"):
        module(games_dir, tmp_path, cache_workers=0)


# --------------------------------------------------------------------------------------
# The approximate end-of-game ownership (belief_vit's belief-map target)


def test_playout_ownership_of_a_settled_board():
    from stonelab.games.go.ownership import game_ownership

    # Black walls off the left, white the right; column 4 is neutral. A lone white
    # stone inside black's area is dead, a lone black stone in white's area too.
    n = 9
    black = [r * n + 3 for r in range(n)] + [4 * n + 7]
    white = [r * n + 5 for r in range(n)] + [4 * n + 1]
    own = game_ownership(n, sorted(black), sorted(white), [], 1, seed=0).reshape(n, n)
    assert own.dtype == np.int8
    assert (own[:, :4] == 1).all()
    assert (own[:, 5:] == -1).all()
    again = game_ownership(n, sorted(black), sorted(white), [], 1, seed=0)
    np.testing.assert_array_equal(own.reshape(-1), again)  # seeded: the same cache every build
    # Moves are replayed before the playouts: the same position reached by moves.
    moves = []
    for b, w in zip(black, white, strict=True):
        moves += [b, w]
    by_moves = game_ownership(n, [], [], moves, 1, seed=0).reshape(n, n)
    assert (by_moves[:, :4] == 1).all() and (by_moves[:, 5:] == -1).all()


def test_ownership_is_cached_and_streamed_from_the_side_to_move(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    cache = dm.cache
    assert cache.ownership.shape == (24, 361) and cache.ownership.dtype == np.int8
    assert set(np.unique(cache.ownership).tolist()) <= {-1, 0, 1}
    assert dm.summary["ownership"]["approximate"] is True
    assert dm.summary["ownership"]["decided_fraction"] > 0.3
    assert dm.summary["cache_bytes_per_position"] < 8  # ownership adds n*n bytes a game, not a position
    # Games that were scored: the winner owns more of the board (approximately!).
    agree = [np.sign(cache.ownership[g].sum()) == cache.winner[g] for g in range(24) if cache.winner[g] != 0]
    assert np.mean(agree) > 0.6
    # The evaluation stream, in order: the first val game's map, from the side to move's view.
    ds = dm.dataset("val")
    batch = next(iter(ds))
    g = int(dm.splits["val"][0])
    assert batch["ownership"].shape == (32, 19, 19) and batch["ownership"].dtype == torch.float32
    k = min(32, len(cache.game(g)[2]))
    expected = cache.ownership[g].reshape(19, 19)[None] * batch["to_play"][:k, None, None].numpy()
    np.testing.assert_array_equal(batch["ownership"][:k].numpy(), expected)
    # Training batches carry it too.
    train = next(iter(dm.train_dataloader()))
    assert train["ownership"].shape == (32, 19, 19)


def test_augmentation_turns_the_ownership_with_the_stones(games_dir, tmp_path):
    from stonelab.games.symmetry import transform_planes

    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    ds = dm.dataset("val")
    batch = next(iter(ds))
    k = len(batch["target"])
    own = batch["ownership"].numpy().reshape(k, 361).astype(np.int8)
    ds.augment = True
    out = ds._finish(batch["planes"].numpy().copy(), batch["target"].numpy().copy(), batch["value"].numpy().copy(),
                     batch["to_play"].numpy().copy(), k, np.random.default_rng(0), own.copy())
    syms = np.random.default_rng(0).integers(8, size=k)
    for i in range(k):
        np.testing.assert_array_equal(out["planes"][i].numpy(), transform_planes(batch["planes"][i].numpy(), int(syms[i])))
        expected = transform_planes(batch["ownership"][i].numpy()[None], int(syms[i]))[0]
        np.testing.assert_array_equal(out["ownership"][i].numpy(), expected)


def test_an_archive_gives_the_same_cache_as_its_files_unpacked(games_dir, tmp_path):
    from stonelab.data.kgs import GameCache

    archive = tmp_path / "KGS-2099-19-24-.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for f in sorted(games_dir.glob("*.sgf"), reverse=True):  # member order differs from name order
            tar.add(f, arcname=f"kgs-19-2099/{f.name}")
    packed = KGSDataModule([str(archive)], cache_dir=str(tmp_path / "a"))
    loose = KGSDataModule([str(games_dir)], cache_dir=str(tmp_path / "b"))
    packed.prepare_data()
    loose.prepare_data()
    a = GameCache.load(packed.cache_folder(), 19)
    b = GameCache.load(loose.cache_folder(), 19)
    for name in GameCache.ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_history_holds_the_previous_positions_of_the_same_game(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4", history=3, batch_size=64)
    dm.setup()
    batch = next(iter(dm.dataset("val")))  # unshuffled: the first game's positions in order
    planes, history = batch["planes"].numpy(), batch["history"].numpy()
    assert history.shape == (64, 3, 4, 19, 19) and history.dtype == np.uint8
    assert not history[0].any()                          # before the start: nothing
    assert not history[1, :2].any()
    np.testing.assert_array_equal(history[1, 2], planes[0])
    np.testing.assert_array_equal(history[10], planes[7:10])  # positions 7, 8, 9 before 10, oldest first


def test_history_turns_with_the_position(games_dir, tmp_path):
    from stonelab.games.symmetry import transform_planes

    dm = module(games_dir, tmp_path, encoder="simple4", history=2)
    dm.setup()
    ds = dm.dataset("val")
    batch = next(iter(ds))
    k = len(batch["target"])
    ds.augment = True
    out = ds._finish(batch["planes"].numpy().copy(), batch["target"].numpy().copy(), batch["value"].numpy().copy(),
                     batch["to_play"].numpy().copy(), k, np.random.default_rng(0), None, batch["history"].numpy().copy())
    syms = np.random.default_rng(0).integers(8, size=k)
    for i in range(k):
        for h in range(2):
            np.testing.assert_array_equal(out["history"][i, h].numpy(),
                                          transform_planes(batch["history"][i, h].numpy(), int(syms[i])))


def test_history_follows_the_belief_models_memory(tmp_path, compose_go):
    assert compose_go("belief_vit", ["model.net.memory=4"], tmp_path).data.history == 4
    assert compose_go("maddison_cnn", [], tmp_path).data.history == 0
    with pytest.raises(ConfigError, match="data.history"):
        module(SAMPLE, tmp_path, history=-1)


# --------------------------------------------------------------------------------------
# Building the cache on every core


@pytest.fixture(scope="module")
def mixed_archive(tmp_path_factory) -> Path:
    """A u-go.net style .tar.gz: 5 sample games beside one game of each kind a build skips."""
    archive = tmp_path_factory.mktemp("archive") / "KGS-2099-19-10-.tar.gz"
    members = {f.name: f.read_bytes() for f in sorted(SAMPLE.glob("*.sgf"))[-5:]}
    members.update({
        "broken.sgf": b"(;GM[1]SZ[19];B[pd];W[dp]",  # parse_error
        "empty.sgf": b"  \n",  # empty_file
        "small.sgf": b"(;GM[1]SZ[9];B[ee];W[cc])",  # board_size
        "taken.sgf": b"(;GM[1]SZ[19];B[pd];W[pd])",  # illegal_move
        "twice.sgf": b"(;GM[1]SZ[19];B[pd];B[dp];W[dd])",  # colours_not_alternating
    })
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"kgs-19-2099/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


def test_many_workers_build_the_one_process_cache_byte_for_byte(mixed_archive, tmp_path, monkeypatch):
    from stonelab.data.kgs import GameCache
    from stonelab.games.go.ownership import game_ownership

    # Tiny work units: the games cross many tasks, and the workers finish them out of order.
    monkeypatch.setattr(kgs, "FILES_PER_TASK", 7)
    monkeypatch.setattr(kgs, "GAMES_PER_TASK", 5)
    sources = [SAMPLE, mixed_archive]
    one = kgs.build_cache(sources, tmp_path / "one", 19, workers=1, progress=False)
    many = kgs.build_cache(sources, tmp_path / "many", 19, workers=3, progress=False)
    for name in GameCache.ARRAYS:
        assert (tmp_path / "one" / f"{name}.npy").read_bytes() == (tmp_path / "many" / f"{name}.npy").read_bytes(), name
    # The skips are counted by reason, not lost in a worker.
    assert one["games_cached"] == many["games_cached"] == 305
    assert {k: v for k, v in many["skipped"].items() if v} == {
        "parse_error": 1, "empty_file": 1, "board_size": 1, "illegal_move": 1, "colours_not_alternating": 1}
    assert ({k: v for k, v in one.items() if k not in ("seconds", "workers")}
            == {k: v for k, v in many.items() if k not in ("seconds", "workers")})
    assert (one["workers"], many["workers"]) == (1, 3)
    # Each game's playouts are seeded by its index in the cache, as a one-process build
    # always did: caches built before workers existed stay valid.
    cache = GameCache.load(tmp_path / "many", 19)
    for g in (0, 6, 299, 304):
        black, white, moves = cache.game(g)
        expected = game_ownership(19, black, white, moves, int(cache.first_player[g]), seed=g)
        np.testing.assert_array_equal(cache.ownership[g], expected, err_msg=str(g))


def test_an_unreadable_archive_stops_the_build_with_its_name(games_dir, tmp_path):
    bad = tmp_path / "KGS-2099-19-1-.tar.gz"
    bad.write_bytes(b"\x1f\x8b" + b"not gzip" * 20)
    for workers in (1, 2):
        with pytest.raises(StonelabError, match=re.escape(f"{bad}: cannot read this archive")):
            kgs.build_cache([games_dir, bad], tmp_path / f"cache{workers}", 19, workers=workers, progress=False)
        assert not (tmp_path / f"cache{workers}").exists()


def test_the_build_reports_its_rate_in_one_log_line(games_dir, tmp_path, capsys):
    dm = module(games_dir, tmp_path, cache_workers=2)
    dm.prepare_data()
    err = capsys.readouterr().err
    assert "\r" not in err and err.endswith("\n")
    assert re.fullmatch(r"kgs cache: 24 games, [\d,]+ positions in \d+ s \([\d,]+ games/s, [\d,]+ positions/s, "
                        r"2 workers\), [\d.]+ bytes/position; skipped none -> \S+\n", err), err
    assert json.loads((dm.cache_folder() / "summary.json").read_text())["workers"] == 2


def test_a_killed_worker_stops_the_build_with_a_message():
    import os

    with kgs._worker_pool(2) as pool, pytest.raises(StonelabError, match="worker process died.*cache_workers=1"):
        list(kgs._in_order(pool, os._exit, [(3,), (3,)], ahead=2))  # the worker exits mid-task


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_in_a_log_file_is_a_new_line_every_ten_seconds():
    clock = iter([0.0, 3.0, 9.9, 10.0, 12.0, 20.5]).__next__  # the start, then one time per update
    stream = _Stream(tty=False)
    report = kgs._Progress(stream=stream, clock=clock)
    for step in range(5):
        report.update(lambda step=step: f"step {step}")
    report.finish("done")
    assert stream.getvalue() == "step 2\nstep 4\ndone\n"


def test_progress_on_a_terminal_rewrites_one_line():
    clock = iter([0.0, 0.1, 0.6, 1.2]).__next__
    stream = _Stream(tty=True)
    report = kgs._Progress(stream=stream, clock=clock)
    report.update(lambda: "too soon")
    report.update(lambda: "a long first line")
    report.update(lambda: "short")
    report.finish("end")
    assert stream.getvalue() == "\ra long first line" + "\rshort" + " " * 12 + "\rend  \n"


def test_cache_workers_come_from_the_data_config(tmp_path, compose_go):
    from hydra.utils import instantiate

    assert compose_go("maddison_cnn", [], tmp_path).data.cache_workers is None  # all cores
    cfg = compose_go("maddison_cnn", ["data.cache_workers=1"], tmp_path)
    assert instantiate(cfg.data, game=instantiate(cfg.game), _convert_="object").cache_workers == 1


def test_batches_carry_komi_and_the_counted_score_from_the_side_to_move(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    cache = dm.cache
    assert cache.score.dtype == np.float32 and cache.score.shape == (24,)
    counted = ~np.isnan(cache.score)
    assert 0 < counted.sum() < 24  # the sample has counted and resigned games
    assert np.all(np.sign(cache.score[counted & (cache.score != 0)]) ==
                  cache.winner[counted & (cache.score != 0)])
    for batch in dm.dataset("val"):  # in order: every position of the val games
        score, to_play, value = batch["score"].numpy(), batch["to_play"].numpy(), batch["value"].numpy()
        known = ~np.isnan(score)
        # The mover's margin: its sign is the mover's result; the komi is the game's own.
        assert np.all(np.sign(score[known & (score != 0)]) == value[known & (score != 0)])
        assert set(batch["komi"].numpy().tolist()) <= set(cache.komi[dm.splits["val"]].tolist())
        assert np.isnan(score[~known]).all() and to_play.shape == score.shape


def test_komi_augmentation_moves_result_and_score_of_counted_games_only(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4")
    dm.setup()
    ds = kgs.GamePositions(dm.cache, dm.splits["train"], "simple4", shuffle=True, augment=False,
                           batch_size=64, shuffle_buffer=64, komi_augment=1.0)
    counted = np.empty((64, 2), dtype=np.float32)
    counted[:32] = (5.5, 6.5)          # black won by 5.5 at komi 6.5: 12 points on the board
    counted[32:] = (np.nan, 6.5)       # a resignation: nothing is known about the board
    to_play = np.where(np.arange(64) % 2 == 0, 1, -1)
    values = (to_play * 1.0).astype(np.float32)  # black won
    out = ds._komi_and_score(counted, to_play, values, np.random.default_rng(0))
    komi, score = out["komi"].numpy(), out["score"].numpy()
    assert np.all(komi[32:] == 6.5) and np.isnan(score[32:]).all()
    assert np.all(values[32:] == to_play[32:])           # a resigned game keeps its result
    assert len(set(komi[:32].tolist())) > 5 and np.all(komi[:32] % 1 == 0.5)  # half points: no jigo
    margin = 12.0 - komi[:32]                              # black's margin under the new komi
    np.testing.assert_allclose(score[:32], margin * to_play[:32])
    np.testing.assert_array_equal(values[:32], np.sign(margin) * to_play[:32])
    assert (values[:32] != to_play[:32]).any()             # some komi turned the result around


def test_evaluation_never_changes_the_komi(games_dir, tmp_path):
    dm = module(games_dir, tmp_path, encoder="simple4", komi_augment=1.0)
    dm.setup()
    assert dm.dataset("val", train=False).komi_augment == 0.0
    assert dm.dataset("train", train=True).komi_augment == 1.0
    with pytest.raises(ConfigError, match="data.komi_augment=2"):
        module(games_dir, tmp_path, komi_augment=2)
