"""The throwaway PostgreSQL server of the test session (tests/pgserver.py and the `postgres_url`
/ `postgres_db` fixtures): a real server that answers, one fresh database per test, reachable
on 127.0.0.1 only, gone afterwards."""
from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from tests import pgserver


def public_tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("select table_name from information_schema.tables "
                            "where table_schema = 'public' order by table_name").fetchall()
    return [r[0] for r in rows]


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on TCP `port`, from the kernel's tables."""
    found = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            host, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = b"".join(struct.pack("=I", int(host[i:i + 8], 16)) for i in range(0, len(host), 8))
                found.add(socket.inet_ntop(family, raw))
    return found


def refused(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError:
        return True
    return False


def test_the_server_answers_a_round_trip(postgres_url):
    u = urlsplit(postgres_url)
    assert (u.scheme, u.hostname, u.path) == ("postgresql", "127.0.0.1", "/traceview")
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("select version()").fetchone()[0].startswith("PostgreSQL ")
        conn.execute("create table round_trip (id integer primary key, body text)")
        conn.execute("insert into round_trip values (%s, %s), (%s, %s)", (1, "één", 2, "<b>two</b>"))
        assert conn.execute("select id, body from round_trip order by id").fetchall() == [
            (1, "één"), (2, "<b>two</b>")]
        conn.rollback()


def test_each_test_gets_its_own_empty_database(postgres_url, postgres_db):
    assert postgres_db != postgres_url
    assert public_tables(postgres_db) == []
    with psycopg.connect(postgres_db) as conn:
        conn.execute("create table mine (x integer)")
    with pgserver.fresh_database(postgres_url) as other:
        assert other not in (postgres_db, postgres_url)
        assert public_tables(other) == []
        with psycopg.connect(other) as conn:
            conn.execute("create table theirs (x integer)")
        assert public_tables(postgres_db) == ["mine"]
        assert public_tables(other) == ["theirs"]
        assert "mine" not in public_tables(postgres_url)


def test_a_fresh_database_is_dropped_even_with_a_connection_left_open(postgres_url):
    with pgserver.fresh_database(postgres_url) as url:
        left_open = psycopg.connect(url)
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("select count(*) from pg_database where datname = %s", (name,)).fetchone() == (0,)
    with pytest.raises(psycopg.OperationalError):
        left_open.execute("select 1")
    left_open.close()


def test_the_server_is_reachable_on_127_0_0_1_only(postgres_url):
    port = urlsplit(postgres_url).port
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("show listen_addresses").fetchone() == ("127.0.0.1",)
        rules = conn.execute("select type, address, auth_method from pg_hba_file_rules").fetchall()
    assert rules == [("host", "127.0.0.1", "trust")]
    assert not refused("127.0.0.1", port)
    if sys.platform == "linux":
        assert listening_addresses(port) == {"127.0.0.1"}
        assert refused("127.0.0.2", port)  # the rest of the loopback network


def test_the_server_stops_and_its_files_go_when_the_block_fails(postgres_url):
    """A second server of its own (`postgres_url` only skips the test where PostgreSQL is not)."""
    with pytest.raises(ZeroDivisionError):
        with pgserver.running("other") as url:
            with psycopg.connect(url) as conn:
                data = Path(conn.execute("show data_directory").fetchone()[0])
            assert data.is_dir()
            1 / 0
    assert refused("127.0.0.1", urlsplit(url).port)
    assert not data.parent.exists()


def test_the_newest_installed_version_is_used(tmp_path):
    for version, initdb in (("9.6", True), ("15", True), ("16", False), ("latest", True)):
        (tmp_path / version / "bin").mkdir(parents=True)
        if initdb:
            (tmp_path / version / "bin" / "initdb").touch()
    assert pgserver.find_bin(tmp_path) == tmp_path / "15" / "bin"


def test_no_postgresql_says_what_to_install(tmp_path):
    with pytest.raises(pgserver.Unavailable) as e:
        pgserver.find_bin(tmp_path)
    assert str(e.value) == (f"PostgreSQL not found under {tmp_path}; install Debian's postgresql package")
