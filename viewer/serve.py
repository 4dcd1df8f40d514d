"""`traceview serve`: run the app with Streamlit in a child process.

Every setting of the packaged .streamlit/config.toml is passed as a command-line flag, so
the app behaves the same whatever directory it is started from; the files and folders to
open follow `--` and reach the entry script as its arguments.
"""
from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
import threading
import tomllib
import urllib.request
import webbrowser
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The server module around the app (viewer/main.py): it reads the given files at start.
ENTRY = HERE / "asgi.py"
CONFIG = HERE / ".streamlit" / "config.toml"


def config_flags(config: Path = CONFIG) -> list[str]:
    """`--section.option value` for every option of a Streamlit config file."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    flags: list[str] = []

    def walk(prefix: str, table: dict) -> None:
        for k, v in table.items():
            name = f"{prefix}.{k}" if prefix else k
            if isinstance(v, dict):
                walk(name, v)
            else:
                flags.extend([f"--{name}", str(v).lower() if isinstance(v, bool) else str(v)])

    walk("", data)
    return flags


def command(paths, port: int = 8501, host: str = "127.0.0.1") -> list[str]:
    # Streamlit always runs headless: otherwise its first start asks for an e-mail address
    # on the terminal and fails without one. `serve` opens the browser itself.
    return [sys.executable, "-m", "streamlit", "run", str(ENTRY), *config_flags(),
            "--server.port", str(int(port)), "--server.address", host,
            "--server.headless", "true",
            "--server.fileWatcherType", "none",
            # `serve` says where the app is, once: Streamlit would list its own addresses too.
            "--logger.hideWelcomeMessage", "true",
            "--", *[str(Path(p).resolve()) for p in paths]]


def _can_open_browser() -> bool:
    """A graphical browser is likely: a desktop session (not a terminal-only machine)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# Read by the app (viewer/pages/state.py): "1" makes an upload visible only to its own session.
PRIVATE_UPLOADS_ENV = "TRACEVIEW_PRIVATE_UPLOADS"


def child_env(private_uploads: bool = False, base=None) -> dict[str, str]:
    """The app's environment: ours, with the private-uploads switch set or cleared."""
    env = dict(os.environ if base is None else base)
    if private_uploads:
        env[PRIVATE_UPLOADS_ENV] = "1"
    else:
        env.pop(PRIVATE_UPLOADS_ENV, None)
    return env


def port_problem(host: str, port: int) -> str | None:
    """Why the app could not listen on host:port (another program holds it, no such
    address...), in plain words; None when it can."""
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, OverflowError) as e:
        return f"cannot listen on {host}: {getattr(e, 'strerror', None) or e}"
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        if os.name != "nt":  # as the server does: a port in TIME_WAIT is free to take
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except PermissionError:
            return f"port {port} needs more privileges than this user has; choose another with --port"
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)):
                return (f"port {port} is already in use (another traceview or another program); "
                        f"choose another with --port, e.g. --port {int(port) + 1}")
            return f"cannot listen on {host}:{port}: {e.strerror or e}"
    return None


def _announce_when_ready(url: str, what: str, proc: subprocess.Popen, open_browser: bool) -> None:
    try:
        wait_ready(url, proc, timeout=300)
    except (RuntimeError, TimeoutError, OSError):
        return
    print(f"traceview: serving {what} at {url}", file=sys.stderr, flush=True)
    if open_browser:
        webbrowser.open(url)


def serve(paths, port: int = 8501, host: str = "127.0.0.1", headless: bool = False,
          private_uploads: bool = False) -> int:
    """Start the app on `paths` (the bundled samples when empty); returns Streamlit's exit code.
    With `private_uploads`, an upload's traces open only in the browser session that uploaded it.
    Its address is printed once, when it answers; a port already taken is said before starting."""
    paths = list(paths or [])
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        for p in missing:
            print(f"traceview serve: no such file or folder: {p}", file=sys.stderr)
        return 2
    problem = port_problem(host, port)
    if problem:
        print(f"traceview serve: {problem}", file=sys.stderr)
        return 2
    proc = subprocess.Popen(command(paths, port, host), env=child_env(private_uploads))
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    url = f"http://{shown}:{int(port)}/"
    what = "the bundled samples" if not paths else ", ".join(map(str, paths))
    print(f"traceview: starting on {what}…", file=sys.stderr, flush=True)
    threading.Thread(target=_announce_when_ready, args=(url, what, proc, not headless and _can_open_browser()),
                     daemon=True).start()

    def forward(signum, _frame):
        if proc.poll() is None:
            proc.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)
                if hasattr(signal, s.name)}
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # the child got the same Ctrl-C: let it finish
                continue
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


# -- a running app, for tests and benchmarks ----------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(paths, port: int, *, host: str = "127.0.0.1", log=None, cwd=None, options=()) -> subprocess.Popen:
    """`traceview serve PATH... --headless [options]` in a child process; see `wait_ready`."""
    exe = Path(sys.executable).with_name("traceview")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "viewer.cli"]
    return subprocess.Popen([*cmd, "serve", *map(str, paths), "--port", str(port), "--host", host, "--headless",
                             *options], stdout=log, stderr=subprocess.STDOUT if log else None, cwd=cwd)


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Block until the app answers its health check (or raise if it exits or times out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"traceview serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"traceview serve did not answer on {url} within {timeout:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Running:
    """`traceview serve PATH... [options]` on a free port until `stop()`; its output goes to a
    log file in `log_dir`. For tests and benchmarks that drive the real app."""

    def __init__(self, paths, log_dir: Path, options=()):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(Path(log_dir) / f"serve-{self.port}.log", "wb")
        self.proc = spawn(paths, self.port, log=self.log, cwd=log_dir, options=options)
        try:
            wait_ready(self.url, self.proc)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> None:
        stop(self.proc)
        self.log.close()
