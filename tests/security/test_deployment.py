"""The deployment settings (backend.deployment): defaults on a machine with none, the secrets table winning over the
environment, the rules for where the server's keys may go, and an admin's mistake named without its value."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend import deployment
from backend.deployment import Deployment, DeploymentError, from_sources


def test_no_settings_open_the_users_own_folders(tmp_path):
    d = from_sources({}, {})
    assert Path.home().resolve() in d.open_folders and not d.configured
    assert d.key_endpoints == () and d.max_file_mb == deployment.DEFAULT_MAX_FILE_MB
    assert not d.allows_folder(Path("/etc/passwd")) or Path.home().resolve() == Path("/")


def test_the_secrets_table_wins_over_the_environment(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    env = {deployment.ENV_OPEN_FOLDERS: str(a), deployment.ENV_MAX_FILE_MB: "5"}
    assert from_sources({}, env).open_folders == (a.resolve(),)
    d = from_sources({"open_folders": [str(b)], "max_file_mb": 7}, env)
    assert d.open_folders == (b.resolve(),) and d.max_file_mb == 7 and d.configured
    assert d.allows_folder((b / "x" / "y.jsonl").resolve()) and not d.allows_folder((a / "y.jsonl").resolve())
    assert not d.allows_folder((tmp_path / "bb").resolve())  # a sibling sharing a prefix is another folder


@pytest.mark.parametrize("url, allowed", [
    (None, True), ("", True),
    ("https://proxy.example.org/v1", True), ("https://proxy.example.org/v1/", True),
    ("https://proxy.example.org:443/v1/chat", True), ("HTTPS://PROXY.example.org/v1", True),
    ("https://proxy.example.org/v10", False), ("https://proxy.example.org/", False),
    ("http://proxy.example.org/v1", False), ("https://proxy.example.org:8443/v1", False),
    ("https://proxy.example.org.evil.net/v1", False), ("https://evil.net/proxy.example.org/v1", False),
    ("https://user:pw@proxy.example.org/v1", False), ("http://127.0.0.1:9911/v1", False), ("not a url", False),
])
def test_keys_go_only_to_allowed_endpoints(url, allowed):
    d = from_sources({"key_endpoints": ["https://proxy.example.org/v1"]}, {})
    assert d.allows_keys_to(url) is allowed


def test_no_endpoint_allowed_by_default():
    assert not from_sources({}, {}).allows_keys_to("http://127.0.0.1:9911/v1")
    env = {deployment.ENV_KEY_ENDPOINTS: "http://127.0.0.1:9911/v1, https://x.example/api"}
    assert from_sources({}, env).allows_keys_to("http://127.0.0.1:9911/v1/chat/completions")


def test_an_admins_mistake_is_named_without_its_value():
    with pytest.raises(DeploymentError, match="open_foldrs") as err:
        from_sources({"open_foldrs": ["/srv/secret-place"]}, {})
    assert "/srv/secret-place" not in str(err.value)
    with pytest.raises(DeploymentError, match="max_file_mb") as err:
        from_sources({"max_file_mb": "lots-of-s3cret"}, {})
    assert "s3cret" not in str(err.value)


def test_configure_then_reset(tmp_path, monkeypatch):
    monkeypatch.setenv(deployment.ENV_OPEN_FOLDERS, str(tmp_path))
    try:
        assert deployment.configure({"max_file_mb": 1}).max_file_bytes == 1024 * 1024
        assert deployment.current().max_file_mb == 1
    finally:
        deployment.reset()
    assert deployment.current().open_folders == (tmp_path.resolve(),)
    assert isinstance(deployment.current(), Deployment)
