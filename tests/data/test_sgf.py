"""stonelab.data.sgf: SGF records to GameRecords, skip reasons, sources, command line."""

from __future__ import annotations

import io
import json
import math
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from stonelab.data.sgf import (
    SKIP_REASONS,
    counted_even_games,
    first_illegal_move,
    game_sgf,
    iter_files,
    iter_sources,
    load_games,
    main,
    rank_dan,
    read_games,
    result_score,
    result_winner,
    sgf_coordinate,
)
from stonelab.errors import StonelabError

ARCHIVES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "kgs-archives"
SMALLEST_ARCHIVE = ARCHIVES / "KGS-2001-19-2298-.tar.gz"

HANDICAP = (
    b"(;GM[1]FF[4]CA[UTF-8]SZ[19]HA[2]KM[0.50]RU[Japanese]"
    b"PB[blackie]BR[2k]PW[whitey]WR[6d]RE[W+Resign]AB[dp][pd]"
    b";W[qp];B[dd];W[];B[tt];W[qq])"
)


def one(data: bytes, **kwargs):
    result = read_games(data, "t.sgf", **kwargs)
    assert not result.skips, result.skips
    (game,) = result.games
    return game


def skip_reason(data: bytes, **kwargs) -> str:
    result = read_games(data, "t.sgf", **kwargs)
    assert not result.games
    (skip,) = result.skips
    return skip.reason


def test_points_are_row_major_with_sgf_top_row_first():
    assert one(b"(;SZ[19];B[aa])").moves == ((1, 0),)
    assert one(b"(;SZ[19];B[sa])").moves == ((1, 18),)  # top right
    assert one(b"(;SZ[19];B[as])").moves == ((1, 18 * 19),)  # bottom left
    assert one(b"(;SZ[9];W[ce])").moves == ((-1, 4 * 9 + 2),)
    assert sgf_coordinate(4 * 9 + 2, 9) == "ce" and sgf_coordinate(81, 9) == ""


def test_handicap_setup_passes_and_game_info():
    game = one(HANDICAP)
    assert game.board_size == 19 and game.handicap == 2 and game.komi == 0.5
    assert game.setup_black == (3 * 19 + 15, 15 * 19 + 3)  # pd, dp
    assert game.setup_white == ()
    pass_ = game.pass_move == 361 and 361
    assert game.moves == ((-1, 15 * 19 + 16), (1, 3 * 19 + 3), (-1, pass_), (1, pass_), (-1, 16 * 19 + 16))
    assert game.first_player == -1  # no PL: the colour of the first move
    assert (game.black_rank, game.white_rank) == ("2k", "6d")
    assert (game.rank_black_dan, game.rank_white_dan) == (0, 6)
    assert game.result == "W+Resign" and game.winner == -1
    assert game.source == "t.sgf#0"
    assert (game.black_player, game.white_player) == ("blackie", "whitey")


def test_pl_sets_first_player_and_missing_info_has_defaults():
    game = one(b"(;SZ[9]PL[B]AW[aa];B[ee])")
    assert game.first_player == 1 and game.setup_white == (0,)
    assert (game.komi, game.handicap, game.result, game.winner) == (0.0, 0, "", 0)
    assert (game.black_rank, game.rank_black_dan) == ("", 0)


def test_two_moves_of_one_colour_are_kept():
    game = one(b"(;SZ[19]HA[2]AB[dp][pd];B[dd];B[pp];W[qq])")
    assert [c for c, _ in game.moves] == [1, 1, -1]


def test_game_sgf_reads_back_as_the_same_game():
    game = one(HANDICAP)
    text = game_sgf(19, -2.5, game.moves, setup_black=game.setup_black, application=("my]bot", "1:2"))
    assert "\n\n" not in text and "HA[2]" in text and "AP[my\\]bot:1\\:2]" in text
    back = one(text.encode())
    assert (back.board_size, back.komi, back.handicap) == (19, -2.5, 2)
    assert (back.setup_black, back.setup_white, back.moves) == (game.setup_black, (), game.moves)
    many = [(1 if i % 2 == 0 else -1, p) for i, p in enumerate((0, 80, 81, 81, 40, 10, 20, 30, 50, 60, 70, 11))]
    long = game_sgf(9, 1e30, many, setup_white=(5,))
    assert "KM[1" + "0" * 30 + "]" in long and "HA[" not in long  # no exponent in SGF reals
    back = one(long.encode(), check_legal=False)
    assert back.moves == tuple(many) and back.setup_white == (5,) and len(long.splitlines()) == 3


@pytest.mark.parametrize(
    ("rank", "dan"),
    [
        ("6d", 6),
        ("9d", 9),
        ("1d", 1),
        ("2k", 0),
        ("30k", 0),
        ("3p", 9),
        ("6d?", 6),
        ("?", 0),
        ("", 0),
        ("-", 0),
    ],
)
def test_rank_dan(rank, dan):
    assert rank_dan(rank) == dan


@pytest.mark.parametrize(
    ("result", "winner"),
    [
        ("B+R", 1),
        ("b+3.5", 1),
        ("W+0.5", -1),
        ("W+Time", -1),
        ("0", 0),
        ("Draw", 0),
        ("Void", 0),
        ("?", 0),
        ("", 0),
    ],
)
def test_result_winner(result, winner):
    assert result_winner(result) == winner


@pytest.mark.parametrize(
    ("result", "score"),
    [("B+5.5", 5.5), ("W+12", -12.0), ("w+0.5", -0.5), ("0", 0.0), ("Jigo", 0.0), ("B+R", None),
     ("W+Resign", None), ("B+T", None), ("W+F", None), ("Void", None), ("?", None), ("", None),
     ("B+nan", None), ("B+-3", None), ("B+inf", None)],
)
def test_result_score_is_the_counted_margin_or_nothing(result, score):
    got = result_score(result)
    assert (math.isnan(got) if score is None else got == score), (result, got)


@pytest.mark.parametrize(
    ("km", "komi"), [(b"KM[6.5]", 6.5), (b"KM[-14.50]", -14.5), (b"KM[0]", 0.0), (b"KM[x]", 0.0), (b"", 0.0)]
)
def test_komi(km, komi):
    assert one(b"(;SZ[19]" + km + b";B[pd])").komi == komi


def test_counted_even_games_are_the_even_games_with_a_counted_margin(tmp_path):
    games = {
        "counted.sgf": b"(;GM[1]SZ[19]KM[6.5]RE[B+3.5];B[pd];W[dd])",
        "resigned.sgf": b"(;GM[1]SZ[19]KM[6.5]RE[W+R];B[pd];W[dd])",
        "draw.sgf": b"(;GM[1]SZ[19]KM[6]RE[0];B[pd];W[dd])",
        "handicap.sgf": b"(;GM[1]SZ[19]HA[2]KM[0.5]AB[pd][dp]RE[W+10.5];W[dd])",
        "small.sgf": b"(;GM[1]SZ[9]KM[7]RE[W+2];B[ee])",
        "white.sgf": b"(;GM[1]SZ[19]KM[6.5]RE[W+12];B[pd];W[dd])",
    }
    for name, data in games.items():
        (tmp_path / name).write_bytes(data)
    found = counted_even_games([str(tmp_path)])
    assert sorted(result_score(g.result) for g in found) == [-12.0, 3.5]


def test_a_collection_gives_every_game_even_with_escaped_brackets():
    data = (
        b"(;SZ[9]C[a comment with \\] and (;B[aa\\]) inside];B[ee];W[cc])\n"
        b"(;SZ[19]PB[two];B[pd](;W[dd])(;W[dp]))"
    )
    result = read_games(data, "c.sgf")
    assert not result.skips
    first, second = result.games
    assert first.board_size == 9 and len(first.moves) == 2 and first.source == "c.sgf#0"
    assert second.black_player == "two" and second.source == "c.sgf#1"
    assert second.moves == ((1, 3 * 19 + 15), (-1, 3 * 19 + 3))  # main line: first variation


def test_a_broken_game_in_a_collection_keeps_the_games_before_it():
    result = read_games(b"(;SZ[9];B[ee])(;SZ[9];B[ff];W[", "c.sgf")
    assert len(result.games) == 1
    assert [(s.source, s.reason) for s in result.skips] == [("c.sgf#1", "parse_error")]


@pytest.mark.parametrize(
    ("data", "black"),
    [
        ("(;CA[GB2312]SZ[19]PB[张三]PW[李四];B[pd])".encode("gb2312"), "张三"),
        ("(;CA[ISO-8859-1]SZ[19]PB[José];B[pd])".encode("latin-1"), "José"),
        ("(;CA[UTF-8]SZ[19]PB[José];B[pd])".encode("latin-1"), "José"),  # wrong CA: latin-1 fallback
        ("(;CA[no-such-charset]SZ[19]PB[José];B[pd])".encode(), "José"),
        ("(;SZ[19]PB[José];B[pd])".encode(), "José"),  # no CA: UTF-8, then latin-1
    ],
)
def test_charsets_never_cost_a_game(data, black):
    game = one(data)
    assert game.black_player == black and game.moves == ((1, 3 * 19 + 15),)


def test_board_size_filter():
    assert one(b"(;SZ[13];B[gg])").board_size == 13
    assert skip_reason(b"(;SZ[13];B[gg])", board_size=19) == "board_size"
    assert one(b"(;B[pd])", board_size=19).board_size == 19  # SZ defaults to 19
    with pytest.raises(StonelabError, match="board_size"):
        next(iter_files([], board_size=7))


def test_illegal_moves_are_found_by_replay():
    assert first_illegal_move(one(b"(;SZ[9];B[ee];W[ff];B[gg])", check_legal=False)) is None
    occupied = one(b"(;SZ[9];B[ee];W[ff];B[ee])", check_legal=False)
    assert first_illegal_move(occupied) == 2
    suicide = one(b"(;SZ[9]AW[ba][ab];W[ii];B[aa])", check_legal=False)
    assert first_illegal_move(suicide) == 1
    ko = b"(;SZ[9]AB[ba][ab][bc]AW[ca][bb][db][cc];B[cb]"  # B captures at cb, W may not retake at once
    assert first_illegal_move(one(ko + b";W[bb])", check_legal=False)) == 1
    assert first_illegal_move(one(ko + b";W[hh];B[hi];W[bb])", check_legal=False)) is None
    assert first_illegal_move(one(ko + b";W[];B[hi];W[bb])", check_legal=False)) is None


def test_replay_follows_the_record_colours_and_play_after_two_passes():
    # not strictly alternating, and play resumes after two passes: both legal on KGS
    game = one(b"(;SZ[9]HA[2]AB[cc][gg];B[ee];B[ce];W[];B[];W[ec];B[eg])")
    assert [c for c, _ in game.moves] == [1, 1, -1, 1, -1, 1]
    same_colour_then_occupied = one(b"(;SZ[9];B[ee];B[cc];W[cc])", check_legal=False)
    assert first_illegal_move(same_colour_then_occupied) == 2
    assert skip_reason(b"(;SZ[9];B[ee];B[cc];W[cc])") == "illegal_move"


def test_setup_without_liberties_is_illegal():
    record = one(b"(;SZ[9]AB[aa]AW[ba][ab];W[ee])", check_legal=False)
    assert first_illegal_move(record) == -1
    result = read_games(b"(;SZ[9]AB[aa]AW[ba][ab];W[ee])", "t.sgf")
    assert [(s.reason, s.detail) for s in result.skips] == [("illegal_move", "setup stones rejected")]


SKIPPED_FILES = {
    "empty.sgf": (b"  \n", "empty_file"),
    "junk.sgf": (b"not an sgf file", "parse_error"),
    "truncated.sgf": (b"(;SZ[19];B[pd];W[dd", "parse_error"),
    "chess.sgf": (b"(;GM[3];B[aa])", "not_go"),
    "seven.sgf": (b"(;SZ[7];B[dd])", "board_size"),
    "wide.sgf": (b"(;SZ[19:13];B[dd])", "board_size"),
    "offboard.sgf": (b"(;SZ[9];B[ee];W[jj])", "bad_coordinate"),
    "badsetup.sgf": (b"(;SZ[9]AB[zz];B[ee])", "bad_coordinate"),
    "setup.sgf": (b"(;SZ[19];B[pd];W[dd]AB[qq];B[pp])", "setup_in_main_line"),
    "nomoves.sgf": (b"(;SZ[19]PB[x]PW[y];C[nothing])", "no_moves"),
    "occupied.sgf": (b"(;SZ[19];B[pd];W[pd])", "illegal_move"),
}


def test_every_skip_reason_is_counted(tmp_path):
    for name, (data, _) in SKIPPED_FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.sgf").write_bytes(HANDICAP + b"\n(;SZ[9];B[ee])(;SZ[9];W[ee];B[ee])")
    games, skipped, files = load_games(tmp_path)
    assert skipped == Counter(reason for _, reason in SKIPPED_FILES.values()) + Counter(illegal_move=1)
    assert set(skipped) == set(SKIP_REASONS)
    assert [g.source for g in games] == [f"{tmp_path / 'good.sgf'}#0", f"{tmp_path / 'good.sgf'}#1"]
    by_name = {Path(f.file).name: f for f in files}
    for name, (_, reason) in SKIPPED_FILES.items():
        assert (by_name[name].action, by_name[name].reason) == ("skip", reason)
    good = by_name["good.sgf"]
    assert (good.action, good.reason, len(good.games), good.moves) == ("load", None, 2, 6)
    assert good.to_json()["skipped"] == {"illegal_move": 1}


def _tar(path: Path, members: dict[str, bytes], mode: str) -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(("suffix", "mode"), [(".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar.bz2", "w:bz2")])
def test_archives_are_read_in_member_order_without_unpacking(tmp_path, suffix, mode):
    members = {"top/b.sgf": b"(;SZ[9];B[ee])", "top/a.sgf": b"(;SZ[9];B[cc])", "top/README": b"x"}
    archive = _tar(tmp_path / f"games{suffix}", members, mode)
    names = [name for name, _ in iter_sources([archive])]
    assert names == [f"{archive}/top/a.sgf", f"{archive}/top/b.sgf"]
    games, skipped, _ = load_games(archive)
    assert [g.moves[0][1] for g in games] == [2 * 9 + 2, 4 * 9 + 4] and not skipped
    assert games[0].source == f"{archive}/top/a.sgf#0"
    assert sorted(tmp_path.iterdir()) == [archive]  # nothing extracted


def test_sources_folders_globs_and_missing_paths(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("sub/b.sgf", "a.sgf", "notes.txt"):
        (tmp_path / name).write_bytes(b"(;SZ[9];B[ee])")
    names = [Path(n).relative_to(tmp_path).as_posix() for n, _ in iter_sources(tmp_path)]
    assert names == ["a.sgf", "sub/b.sgf"]
    assert [Path(n).name for n, _ in iter_sources([str(tmp_path / "**" / "*.sgf")])] == ["a.sgf", "b.sgf"]
    with pytest.raises(StonelabError, match="missing.sgf"):
        list(iter_sources([tmp_path / "a.sgf", tmp_path / "missing.sgf"]))
    with pytest.raises(StonelabError, match=r"nothing\*\.sgf"):
        list(iter_sources([str(tmp_path / "nothing*.sgf")]))


@pytest.mark.skipif(not SMALLEST_ARCHIVE.exists(), reason="shared KGS archives not present")
def test_a_real_ugo_archive_parses():
    members = results = 0
    skipped = Counter()
    for result in iter_files([SMALLEST_ARCHIVE], board_size=19, check_legal=False):
        members += 1
        results += len(result.games)
        skipped.update(s.reason for s in result.skips)
    assert members == 2298  # the archive's README
    assert results + sum(skipped.values()) == members
    assert skipped["parse_error"] == 0 and set(skipped) <= set(SKIP_REASONS)
    assert results > 2250


def test_cli_json_lines_and_summary(tmp_path, capsys):
    (tmp_path / "good.sgf").write_bytes(HANDICAP)
    (tmp_path / "bad.sgf").write_bytes(b"(;SZ[7];B[dd])")
    main(["--json", str(tmp_path)])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    *files, summary = lines
    assert [(f["file"], f["action"], f["reason"], f["games"], f["moves"]) for f in files] == [
        (str(tmp_path / "bad.sgf"), "skip", "board_size", 0, 0),
        (str(tmp_path / "good.sgf"), "load", None, 1, 5),
    ]
    assert {"file", "action", "reason", "games", "moves"} <= set(files[0])
    assert summary["summary"]["games"] == 1 and summary["summary"]["skipped"]["board_size"] == 1


def test_cli_table_and_missing_path(tmp_path, capsys):
    (tmp_path / "good.sgf").write_bytes(HANDICAP)
    main([str(tmp_path / "good.sgf"), "--board-size", "19"])
    out = capsys.readouterr().out
    assert "games loaded 1" in out and "illegal_move" in out
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "good.sgf"), str(tmp_path / "gone.sgf")])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"error: {tmp_path / 'gone.sgf'}: no such file or folder"
    assert captured.out == ""
