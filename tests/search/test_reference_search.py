"""Search results pinned against stored ones: refactors must not change them, nor the tree threads."""

from __future__ import annotations

import numpy as np
import pytest
from reference_search import DATA, run_reference


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_search_matches_stored_reference(threads):
    stored = np.load(DATA)["visits"]
    np.testing.assert_array_equal(run_reference(threads), stored)
