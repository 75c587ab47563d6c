"""The Maximum Soft-bias Decision Tree (docs/methods/bridge.md §3 Step 4; paper Eqs. 5-6): S1-S4 and the soft
bias -> FA, FI,
FE, RA or REFLECT, with every node visited and the numbers it compared.

``T_Ret = r_p·[S3 + (1 − S2)]`` and ``T_LLM = g_p·[S2 + (1 − S3)]``; "Maximum" is read as following the larger
of the two (docs/methods/bridge.md §3 Step 4, [ours]). With D = S3 − S2: T_Ret = r_p(1 + D), T_LLM = g_p(1 − D).
"""

from __future__ import annotations

from backend.schema import BridgeNode

ALPHA = 0.5   # the paper's thresholds, tuned once on TRD val and frozen
BETA = 1.1


def _node(node: str, condition: str, left: float, op: str, right: float, label: str) -> BridgeNode:
    result = {">": left > right, "<": left < right, ">=": left >= right}[op]
    filled = f"{label} = {left:.3f} {op} {right:.3f} ? {'yes' if result else 'no'}"
    return BridgeNode(node=node, condition=condition, left=round(left, 6), op=op, right=round(right, 6),
                      result=result, filled=filled)


def confidences(r_p: float, g_p: float, s2: float, s3: float) -> tuple[float, float]:
    """(T_Ret, T_LLM), Eqs. 5-6."""
    return r_p * (s3 + (1 - s2)), g_p * (s2 + (1 - s3))


def decide(r_p: float, g_p: float, s1: float, s2: float, s3: float, s4: float, alpha: float = ALPHA,
           beta: float = BETA) -> tuple[str, list[BridgeNode], float | None, float | None]:
    """(outcome, nodes visited, T_Ret, T_LLM); T values are None when N0 already chose FA."""
    path = [_node("N0", "S1 + S4 > (1 − S1) + (1 − S4)", s1 + s4, ">", (1 - s1) + (1 - s4), "S1 + S4")]
    if path[-1].result:
        return "FA", path, None, None
    t_ret, t_llm = confidences(r_p, g_p, s2, s3)
    path.append(_node("N2", "T_Ret < T_LLM", t_ret, "<", t_llm, "T_Ret"))
    if path[-1].result:
        path.append(_node("N3", "T_LLM > α", t_llm, ">", alpha, "T_LLM"))
        return ("FI" if path[-1].result else "RA"), path, t_ret, t_llm
    path.append(_node("N4", "T_Ret ≥ β", t_ret, ">=", beta, "T_Ret"))
    if path[-1].result:
        return "FE", path, t_ret, t_llm
    path.append(_node("N5", "T_Ret < α", t_ret, "<", alpha, "T_Ret"))
    return ("RA" if path[-1].result else "REFLECT"), path, t_ret, t_llm
