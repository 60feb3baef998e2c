"""One output type for the Go nets, and no import cycle among the Go model modules."""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from stonelab.models.nets.belief_vit import BeliefViT
from stonelab.models.nets.maddison import MaddisonNet
from stonelab.models.outputs import GoModelOutput

MODELS = Path(__file__).resolve().parents[2] / "src" / "stonelab" / "models"


def test_both_nets_return_a_go_model_output():
    planes, to_play = torch.rand(2, 4, 9, 9), torch.tensor([1, -1])
    cnn = MaddisonNet(4, 9, depth=2, filters=4)(planes, to_play)
    vit = BeliefViT(4, 9, embed_dim=16, heads=2, layers=1, ff_dim=32, belief_hidden=16)(planes, to_play)
    assert isinstance(cnn, GoModelOutput) and isinstance(vit, GoModelOutput)
    assert cnn.policy_logits.shape == (2, 81) and not cnn.has_belief
    assert cnn.value is None and cnn.confidence is None and cnn.belief_map is None
    assert vit.policy_logits.shape == (2, 82) and vit.has_belief
    assert vit.value.shape == (2,) and vit.confidence.shape == (2,) and vit.belief_map.shape == (2, 9, 9)
    assert torch.allclose(vit.confidence, torch.sigmoid(vit.confidence_logit))
    assert torch.allclose(vit.belief_map, torch.tanh(vit.ownership_logits / 2))
    first = vit.apply(lambda t: t[:1].detach())
    assert first.policy_logits.shape == (1, 82) and first.ownership_logits.shape == (1, 9, 9)
    assert not first.policy_logits.requires_grad and cnn.apply(lambda t: t[:1]).value_logit is None


def _stonelab_imports(path: Path) -> set[str]:
    """Every stonelab module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("stonelab"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            found.update(n for n in [node.module, *names] if (MODELS.parent.parent / (n.replace(".", "/") + ".py")).exists())
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stonelab"))
    return found


def test_no_import_cycle_among_the_go_model_modules():
    modules = {f"stonelab.models.{p.stem}": p for p in MODELS.glob("*.py")}
    graph = {name: _stonelab_imports(path) & set(modules) for name, path in modules.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cyclic = sorted(name for name in graph if reaches(name, name, {name}))
    assert not cyclic, f"import cycles through {cyclic}"
