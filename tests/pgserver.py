"""A throwaway PostgreSQL server for the tests and benchmarks: Debian's binaries, a fresh cluster
in a temp dir, listening on 127.0.0.1 only with trust authentication for that address alone.

    with running() as url:                  # postgresql://USER@127.0.0.1:PORT/traceview
        with fresh_database(url) as db_url:  # an empty database of its own, dropped after
            ...

As root (initdb refuses to run as root) the cluster belongs to the `postgres` system user, which
Debian's package creates; otherwise it belongs to the current user.
"""
from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from viewer.serve import free_port

ROOT = Path("/usr/lib/postgresql")
DATABASE = "traceview"
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",  # a throwaway cluster: speed over durability
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


class Unavailable(RuntimeError):
    """PostgreSQL cannot be run on this machine; the message says what to install."""


def find_bin(root: Path | None = None) -> Path:
    """The newest `<version>/bin` holding initdb under `root` (ROOT when not given)."""
    root = ROOT if root is None else root
    found = []
    for d in root.glob("*/bin"):
        try:
            version = tuple(int(part) for part in d.parent.name.split("."))
        except ValueError:
            continue
        if (d / "initdb").is_file():
            found.append((version, d))
    if not found:
        raise Unavailable(f"PostgreSQL not found under {root}; install Debian's postgresql package")
    return max(found)[1]


def owner() -> pwd.struct_passwd:
    """Who runs the server: `postgres` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid())
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("running as root needs the postgres system user to own the server "
                          "(Debian's postgresql package creates it)") from None


def _run(cmd: list, user: pwd.struct_passwd | None = None, cwd: Path | None = None) -> None:
    """Run one PostgreSQL program (as `user` when given), raising with its output on failure."""
    as_user = {} if user is None or user.pw_uid == os.geteuid() else {
        "user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # only what we pass
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, env=env,
                          **as_user)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed (exit {done.returncode}): "
                           f"{(done.stdout + done.stderr).strip()}")


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@contextlib.contextmanager
def running(database: str = DATABASE) -> Iterator[str]:
    """Start a fresh server on a free port of 127.0.0.1 and yield the URL of `database` on it;
    stop the server and remove its files on the way out, whatever happened."""
    bin_dir, user = find_bin(), owner()
    top = Path(tempfile.mkdtemp(prefix="traceview-pg-"))
    data, sockets, log = top / "data", top / "sockets", top / "server.log"
    port = free_port()
    url = f"postgresql://{user.pw_name}@127.0.0.1:{port}/{database}"
    try:
        sockets.mkdir()
        for p in (top, sockets):
            os.chown(p, user.pw_uid, user.pw_gid)
        _run([bin_dir / "initdb", "-D", data, "-U", user.pw_name, "--auth=trust", "-E", "UTF8",
              "--locale=C", "--no-sync", "--no-instructions"], user, cwd=top)
        (data / "pg_hba.conf").write_text("host all all 127.0.0.1/32 trust\n", encoding="utf-8")
        settings = {**SETTINGS, "port": str(port), "unix_socket_directories": str(sockets)}
        with open(data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.writelines(f"{k} = {_quote(v)}\n" for k, v in settings.items())
        try:
            _run([bin_dir / "pg_ctl", "start", "-D", data, "-l", log, "-w", "-t", "60"], user, cwd=top)
            _run([bin_dir / "createdb", *_client_args(url), database])
        except RuntimeError as e:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{e}\nserver log:\n{tail}") from e
        yield url
    finally:
        with contextlib.suppress(RuntimeError):
            _run([bin_dir / "pg_ctl", "stop", "-D", data, "-m", "immediate", "-w"], user, cwd=top)
        shutil.rmtree(top)


def _client_args(url: str) -> list[str]:
    u = urlsplit(url)
    return ["-h", u.hostname, "-p", str(u.port), "-U", u.username]


@contextlib.contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """A new empty database with a unique name on the server of `url`; yields its URL and drops
    it afterwards, closing any connection still open to it."""
    name = f"db_{uuid.uuid4().hex}"
    bin_dir, args = find_bin(), _client_args(url)
    _run([bin_dir / "createdb", *args, name])
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        _run([bin_dir / "dropdb", *args, "--force", name])
