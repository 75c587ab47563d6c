"""One colour per kind of evidence, identical on every page and chart."""

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
