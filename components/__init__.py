"""Pure view helpers: typed results in, plotly figures / pandas frames out (plus tiny st render helpers)."""
