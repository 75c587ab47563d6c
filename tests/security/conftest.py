"""The security tests' browser: one Chromium for the package, as tests/browser has its own."""

import pytest

from tests.browser.conftest import chromium_browser


@pytest.fixture(scope="package")
def browser():
    yield from chromium_browser()
