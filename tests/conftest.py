"""Shared test set-up: offline environment before any heavy import, paths, a per-session cache folder."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
# the offline model's reading of a prompt must agree with the task fields sent beside it (backend.llm.offline.check)
os.environ.setdefault("CONFLICTLENS_OFFLINE_CHECK", "strict")

# the tests' own files live in the temporary folder: open it to pages and links beside the user's folders (the
# security tests set their own folders)
if "CONFLICTLENS_OPEN_FOLDERS" not in os.environ:
    import tempfile

    from backend.deployment import default_open_folders

    os.environ["CONFLICTLENS_OPEN_FOLDERS"] = os.pathsep.join(
        [str(f) for f in default_open_folders()] + [str(Path(tempfile.gettempdir()).resolve()),
                                                    str(Path(__file__).resolve().parent / "fixtures")])

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _session_folder(tmp_path_factory, variable: str, name: str):
    path = tmp_path_factory.mktemp(name)
    old = os.environ.get(variable)
    os.environ[variable] = str(path)
    yield path
    if old is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = old


@pytest.fixture(scope="session", autouse=True)
def _session_cache_dir(tmp_path_factory):
    """Every test session gets its own cache folder, so runs never share or pollute a user's cache."""
    yield from _session_folder(tmp_path_factory, "CONFLICTLENS_CACHE_DIR", "conflictlens-cache")


@pytest.fixture(scope="session", autouse=True)
def _session_data_dir(tmp_path_factory):
    """...and its own data folder: an app a test starts without naming a label store opens the per-user labels.db,
    which must never be the user's (CI once met a store another checkout had migrated to a newer schema)."""
    yield from _session_folder(tmp_path_factory, "CONFLICTLENS_DATA_DIR", "conflictlens-data")


@pytest.fixture(scope="session")
def ramdocs():
    """The bundled 100-question RAMDocs dev set (loaded once per session)."""
    from backend.data import load_dataset
    from backend.paths import SAMPLE_DATA

    return load_dataset(SAMPLE_DATA / "ramdocs_dev")
