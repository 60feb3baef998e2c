"""README.md and docs/*.md: every relative link leads to a file (and heading), every
`python src/train.py|eval.py|play.py ...` command in them composes with the real config.

Commands are read from fenced code blocks (backslash continuations joined, from
``python src/`` on, up to a comment, pipe or ``&&``) and from inline code spans in the
prose. ``<placeholders>`` stand for a value (a run folder, a checkpoint) and become ``x``;
shell variables (``$RUN``) likewise; an optional ``[key=value]`` is given, and an elided
value (``key=...``) or rest (``...``) is left out; Hydra's flags (``-m``, ``--help``, ``--cfg job``) are
dropped. Composing checks that every group option and key exists, as the entry point would
before running anything.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from pathlib import Path

import pytest

ENTRY_POINTS = {"train": "train", "eval": "eval", "play": "play"}
COMMAND = re.compile(r"python src/(train|eval|play)\.py")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE = re.compile(r"`(python src/(?:train|eval|play)\.py[^`]*)`")
STOP_TOKENS = {"|", "||", "&&", "&", ";", ">", ">>", "2>", "2>&1"}
FLAGS_WITH_VALUE = {"--cfg", "-c", "--package", "-p", "--info"}


def pages(root: Path) -> list[Path]:
    """README.md and every docs/*.md: the pages a reader follows."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
    text = text.replace("`", "").strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor in a Markdown page (repeats get -1, -2, ... as on GitHub)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def relative_links(text: str) -> list[str]:
    """The link targets of a page that point into the repository (no scheme, no mailto)."""
    prose = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))
    return [t for t in LINK.findall(prose) if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


def commands(text: str) -> list[str]:
    """Every `python src/<entry>.py ...` command in a page's code blocks, one string each."""
    found = []
    for block in FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            match = COMMAND.search(line)
            if match:
                command = line[match.start():]
                quote = line[match.start() - 1] if match.start() and line[match.start() - 1] in "\"'" else ""
                if quote:  # a command quoted as another's argument (--brain "python src/play.py ...")
                    command = command.split(quote, 1)[0]
                found.append(command.strip())
    return found


def inline_commands(text: str) -> list[str]:
    """The commands quoted in a page's prose (`python src/... ...`), often only a part of one."""
    return [" ".join(span.split()) for span in INLINE.findall(FENCE.sub("", text))]


def overrides(command: str) -> tuple[str, list[str]]:
    """The entry point and the Hydra overrides of one command, as the test composes them."""
    command = re.sub(r"<[^>]*>", "x", command)
    command = re.sub(r"\$\([^)]*\)|\$\{?\w+\}?", "x", command)
    tokens = shlex.split(command, comments=True)
    entry = COMMAND.match(" ".join(tokens[:2])).group(1)
    args: list[str] = []
    skip = False
    for token in tokens[2:]:
        if token in STOP_TOKENS:
            break
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = token in FLAGS_WITH_VALUE
        else:
            optional = re.fullmatch(r"\[([\w.+~]+=.*)\]", token)  # [key=value]: an optional part, given
            token = optional.group(1) if optional else token
            # a shell variable standing alone ($RESUME), an elided rest, an elided value
            if token not in ("x", "...") and not token.endswith("=..."):
                args.append(token)
    return entry, args


@pytest.fixture(scope="module")
def doc_pages(repo_root) -> dict[str, str]:
    return {str(p.relative_to(repo_root)): p.read_text() for p in pages(repo_root)}


def test_the_pages_exist(repo_root, doc_pages):
    assert "README.md" in doc_pages
    assert len(doc_pages) > 2, "docs/ holds the guides the README links to"
    readme = doc_pages["README.md"]
    linked = {Path(t.split("#")[0]).as_posix() for t in relative_links(readme)}
    for page in doc_pages:
        if page != "README.md" and page.startswith("docs/"):
            name = Path(page).name
            # every guide is reachable from the README, directly or through another page
            assert page in linked or any(
                name in {Path(t.split("#")[0]).name for t in relative_links(text)}
                for other, text in doc_pages.items() if other != page
            ), f"nothing links to {page}"


def test_relative_links_lead_to_files_and_headings(repo_root, doc_pages):
    broken = []
    for page, text in doc_pages.items():
        folder = (repo_root / page).parent
        for target in relative_links(text):
            path, _, anchor = target.partition("#")
            file = (folder / path).resolve() if path else repo_root / page
            if not file.exists():
                broken.append(f"{page}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
                broken.append(f"{page}: {target} (no heading #{anchor} in {file.name})")
    assert not broken, "\n".join(broken)


def test_readme_is_a_front_door(doc_pages):
    readme = doc_pages["README.md"]
    assert len(readme.splitlines()) <= 320, "the README is the front door: details belong in docs/"
    assert not re.search(r"\bseeds? 00\d", readme, re.I), "the README names the papers by title"
    # .ci/run runs the Quickstart's test command: keep the two the same
    assert "pip install torch==2.13.0 && pip install -e . && python -m stonelab.compile && python src/train.py" in readme
    assert 'pip install torch==2.13.0 && pip install -e ".[dev]" && python -m pytest' in readme


def test_pages_speak_about_the_project_only(doc_pages):
    for page, text in doc_pages.items():
        assert not re.search(r"\b(session|issue) #?\d", text, re.I), page


def test_commands_compose(compose_config, doc_pages):
    counts = dict.fromkeys(ENTRY_POINTS, 0)
    for page, text in doc_pages.items():
        fenced = commands(text)
        for command in fenced + inline_commands(text):
            entry, args = overrides(command)
            try:
                cfg = compose_config(ENTRY_POINTS[entry], args)
            except Exception as error:  # noqa: BLE001 - name the page and the command
                pytest.fail(f"{page}: `{command}` does not compose: {error}")
            counts[entry] += 1
            if entry == "eval":
                assert cfg.task in ("match", "ladder", "predict", "inspect", "gtp_match", "tactics"), (page, command)
            if entry in ("eval", "play") and command in fenced and "--help" not in command:
                assert cfg.ckpt_path, (page, command)
            if entry == "eval" and any(a.startswith("opponent_command=") for a in args):
                # the whole engine command, one value (or our in-process pure MCTS)
                assert " " in cfg.opponent_command or cfg.opponent_command == "pure_mcts", (page, command)
    assert counts["train"] >= 20 and counts["eval"] >= 10 and counts["play"] >= 3, counts


def test_command_reading():
    text = "```bash\n# c\nOMP_NUM_THREADS=1 python src/train.py a=1 \\\n    b=<x y> # note\n```\n" \
           "and `python src/eval.py task=predict\n--help` inline\n"
    assert commands(text) == ["python src/train.py a=1      b=<x y> # note"]
    assert inline_commands(text) == ["python src/eval.py task=predict --help"]
    assert overrides(commands(text)[0]) == ("train", ["a=1", "b=x"])
    assert overrides("python src/eval.py [go.leaf_value=...] [games=5] 'playouts=[0,100]'") == (
        "eval", ["games=5", "playouts=[0,100]"])
    assert overrides("python src/train.py experiment=... ...") == ("train", [])
    assert commands('```\nm --brain "python src/play.py protocol=gomocup ckpt_path=a.npz" --brain "b"\n```') == [
        "python src/play.py protocol=gomocup ckpt_path=a.npz"]
    assert overrides("python src/train.py -m hparams_search=g --cfg job | head") == ("train", ["hparams_search=g"])
    assert commands("```\nsrun python src/train.py hydra.run.dir=$RUN $RESUME\n```") == [
        "python src/train.py hydra.run.dir=$RUN $RESUME"]
    assert overrides("python src/train.py hydra.run.dir=$RUN $RESUME") == ("train", ["hydra.run.dir=x"])
    assert _slug("Training: `python src/train.py`") == "training-python-srctrainpy"
    assert anchors("# A\n## A\n```\n# not\n```\n## B c\n") == {"a", "a-1", "b-c"}
