"""Label stores for the repository tests: a SQLite file and a database on a real PostgreSQL server."""

import itertools

import pytest

from tests.servers import fresh_database, postgres_server

_names = itertools.count()


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the whole session (initdb + pg_ctl on loopback); its URL."""
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_where(request, tmp_path):
    """Where a fresh, empty label store lives, once per backend."""
    if request.param == "sqlite":
        return str(tmp_path / "labels.db")
    return fresh_database(request.getfixturevalue("postgres"), f"labels_{next(_names)}")


@pytest.fixture
def store(store_where):
    from backend.labels import LabelStore

    s = LabelStore(store_where)
    yield s
    s.close()
