"""The deployment settings of this server, from the ``[deployment]`` table of .streamlit/secrets.toml
(``backend.deployment``); read on every script run, so an admin's edit of the secrets file applies at once."""

from __future__ import annotations

import streamlit as st

from backend import deployment


def secrets_table(name: str) -> dict:
    """A table of .streamlit/secrets.toml as a plain dict ({} when there is no secrets file or no such table)."""
    try:
        table = st.secrets.get(name)
    except Exception:  # noqa: BLE001 - no secrets file is the normal case
        return {}
    return dict(table) if table is not None and hasattr(table, "keys") else {}


def apply() -> deployment.Deployment:
    """Configure this process from the secrets; a wrong setting stops the app with one line naming it."""
    try:
        return deployment.configure(secrets_table(deployment.SECRETS_TABLE))
    except deployment.DeploymentError as err:
        st.error(f"This server's settings are not valid: {err}. Whoever runs the server fixes "
                 ".streamlit/secrets.toml.")
        st.stop()
