"""BRIDGE's Maximum Soft-bias Decision Tree: the six worked leaves and the derived facts of
docs/methods/bridge.md §3 Step 4."""

import numpy as np
import pytest

from backend.methods.bridge import confidences, decide


@pytest.mark.parametrize("rp,s1,s2,s3,s4,t_ret,t_llm,nodes,leaf", [
    (.2, .72, .80, .70, .65, None, None, ["N0"], "FA"),
    (.2, .45, .80, .35, .40, 0.11, 1.16, ["N0", "N2", "N3"], "FI"),
    (.8, .30, .20, .85, .35, 1.32, 0.07, ["N0", "N2", "N4"], "FE"),
    (.8, .25, .60, .15, .30, 0.44, 0.29, ["N0", "N2", "N4", "N5"], "RA"),
    (.2, .30, .30, .75, .40, 0.29, 0.44, ["N0", "N2", "N3"], "RA"),
    (.8, .35, .40, .55, .45, 0.92, 0.17, ["N0", "N2", "N4", "N5"], "REFLECT"),
])
def test_worked_examples(rp, s1, s2, s3, s4, t_ret, t_llm, nodes, leaf):
    out, path, tr, tl = decide(rp, 1 - rp, s1, s2, s3, s4)
    assert out == leaf and [n.node for n in path] == nodes
    if t_ret is None:
        assert tr is None and tl is None and path[0].result
        assert path[0].filled == f"S1 + S4 = {s1 + s4:.3f} > {2 - s1 - s4:.3f} ? yes"
    else:
        assert (round(tr, 2), round(tl, 2)) == (t_ret, t_llm)
        assert not path[0].result and all(n.left is not None for n in path)


def _grid():
    for s2 in np.linspace(0, 1, 21):
        for s3 in np.linspace(0, 1, 21):
            yield float(s2), float(s3)


@pytest.mark.parametrize("rp", [0.1, 0.2, 0.3, 0.4, 0.5, 0.54])
def test_fe_is_unreachable_below_r_p_055(rp):
    leaves = {decide(rp, 1 - rp, 0.0, s2, s3, 0.0)[0] for s2, s3 in _grid()}
    assert "FE" not in leaves and "FA" not in leaves   # S1 = S4 = 0: N0 always fails


def test_at_r_p_02_only_fi_and_ra_happen():
    leaves = {decide(0.2, 0.8, 0.0, s2, s3, 0.0)[0] for s2, s3 in _grid()}
    assert leaves == {"FI", "RA"}
    # D = S3 − S2 alone decides once N0 fails: D < 0.375 -> FI, else RA
    for s2, s3 in _grid():
        d = s3 - s2
        if abs(d - 0.375) > 1e-6 and abs(d - 0.6) > 1e-6:
            assert decide(0.2, 0.8, 0.0, s2, s3, 0.0)[0] == ("FI" if d < 0.375 else "RA")


def test_at_r_p_08_fi_never_happens_and_fe_needs_d_0375():
    for s2, s3 in _grid():
        d = s3 - s2
        leaf = decide(0.8, 0.2, 0.0, s2, s3, 0.0)[0]
        assert leaf != "FI"
        if abs(abs(d) - 0.375) > 1e-6:
            assert leaf == ("FE" if d >= 0.375 else "REFLECT" if d >= -0.375 else "RA")


def test_confidences_are_eqs_5_and_6():
    assert confidences(0.8, 0.2, 0.4, 0.55) == pytest.approx((0.8 * (0.55 + 0.6), 0.2 * (0.4 + 0.45)))
