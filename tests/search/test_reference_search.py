"""Search results pinned against stored ones: refactors must not change them."""

from __future__ import annotations

import numpy as np
from reference_search import DATA, run_reference


def test_search_matches_stored_reference():
    stored = np.load(DATA)["visits"]
    np.testing.assert_array_equal(run_reference(), stored)
