"""One colour per kind of evidence, verdict and RA-RAG aggregation, identical on every page, chart and report."""

KIND_COLORS = {
    "correct": "#2e7d32",       # green
    "misinfo": "#c62828",       # red
    "noise": "#9e9e9e",         # grey
    "internal": "#6a1b9a",      # purple: model-generated knowledge
    "external": "#1565c0",      # blue: retrieved knowledge
    "unlabelled": "#f9a825",    # amber: no truth label available
}
KIND_ORDER = ["correct", "misinfo", "noise", "unlabelled"]
KIND_LABELS = {"correct": "correct", "misinfo": "misinformation", "noise": "noise", "unlabelled": "unlabelled"}
BADGE_COLORS = {"correct": "green", "misinfo": "red", "noise": "gray", "unlabelled": "orange"}

#: RA-RAG aggregations, identical on every chart that compares them.
VARIANT_COLORS = {
    "mv": "#9e9e9e",            # grey: plain majority voting
    "wmv": "#1565c0",           # blue: all sources, estimated weights
    "rrss": "#2e7d32",          # green: RA-RAG (κ-RRSS + WMV)
    "oracle_wmv": "#6a1b9a",    # purple: true reliabilities (evaluation only)
}
VARIANT_LABELS = {"mv": "MV", "wmv": "WMV", "rrss": "RA-RAG (κ-RRSS)", "oracle_wmv": "oracle WMV"}

#: Verdicts (``backend.scoring.verdict``) as Streamlit badge colours.
VERDICT_COLORS = {"correct": "green", "correct + extras": "blue", "partly correct": "orange", "wrong": "red",
                  "unreadable": "red", "abstained": "gray", "error": "orange", "no gold answers": "gray"}

#: RC-RAG's operating points (the Risk page): its fusion strategies and the keep-everything reference.
STRATEGY_COLORS = {
    "direct": "#1565c0",        # blue: direct selection, the paper's default
    "probability": "#00838f",   # teal: probability comparison
    "safety": "#6d4c41",        # brown: safety, in the released code only
    "reference": "#9e9e9e",     # grey: no risk control (keep every answer)
}

#: A method's colour when it declares none it can be told by (a method unknown to this process).
OTHER_METHOD_COLOR = "#607d8b"


def method_color(name: str) -> str:
    """One colour per method on charts that compare methods (its ``MethodSpec.color``)."""
    from backend.methods import SPECS

    return SPECS[name].color if name in SPECS else OTHER_METHOD_COLOR
