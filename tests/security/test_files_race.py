"""A path checked by ``backend.files.confine`` and then opened: a folder of it swapped for a symlink to outside the
open folders in between (by anyone who can write in an open folder) must not let the read follow it out
(issue 26 review: O_NOFOLLOW guards only the path's last part)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from backend import deployment, files

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel check uses /proc/self/fd")


@pytest.fixture(autouse=True)
def _settings():
    deployment.reset()
    yield
    deployment.reset()


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(tmp_path, monkeypatch):
    opened, secret = tmp_path / "open", tmp_path / "secret"
    (opened / "a").mkdir(parents=True)
    secret.mkdir()
    (opened / "a" / "x.json").write_text("public", encoding="utf-8")
    (secret / "x.json").write_text("TOP-SECRET", encoding="utf-8")
    monkeypatch.setenv(deployment.ENV_OPEN_FOLDERS, str(opened))
    assert files.read_bytes(opened / "a" / "x.json", confine_as="dataset") == b"public"
    checked = files.confine

    def swapped_after_the_check(path, what="file"):
        resolved = checked(path, what)
        shutil.rmtree(opened / "a")
        os.symlink(secret, opened / "a")
        return resolved

    monkeypatch.setattr(files, "confine", swapped_after_the_check)
    with pytest.raises(files.FileRefused) as err:
        files.read_bytes(opened / "a" / "x.json", confine_as="dataset")
    assert str(err.value) == (f"{opened / 'a' / 'x.json'}: outside the folders this server opens datasets from "
                              "(the deployment setting open_folders)")
    assert "TOP-SECRET" not in str(err.value)
