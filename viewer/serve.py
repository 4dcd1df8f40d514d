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
import tempfile
import time
import threading
import tomllib
import urllib.request
import webbrowser
from pathlib import Path

from viewer import access

HERE = Path(__file__).resolve().parent
LIBRARY_ENV = "TRACEVIEW_LIBRARY"
WHOLE_LIBRARY_ENV = "TRACEVIEW_WHOLE_LIBRARY"  # the server shows its whole library (no path given)
JOBS_ENV = "TRACEVIEW_JOBS"  # processes indexing the given paths
# A lock file held while `serve`'s head start indexes the given paths (`HeadStart`).
HEAD_START_ENV = "TRACEVIEW_HEAD_START"
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


def child_env(private_uploads: bool = False, base=None, *, sign_in=(), token: str | None = None,
              library: str | None = None, whole_library: bool = False, jobs: int | None = None) -> dict[str, str]:
    """The app's environment: ours, with the private-uploads switch, the sign-in methods (and
    the access token, which never goes on a command line), the library, whether the server
    shows all of it, and how many processes index, set or cleared."""
    env = dict(os.environ if base is None else base)
    for name in (PRIVATE_UPLOADS_ENV, access.AUTH_ENV, access.TOKEN_ENV, WHOLE_LIBRARY_ENV, JOBS_ENV):
        env.pop(name, None)
    if library:
        env[LIBRARY_ENV] = library
    if whole_library:
        env[WHOLE_LIBRARY_ENV] = "1"
    if jobs:
        env[JOBS_ENV] = str(int(jobs))
    if private_uploads:
        env[PRIVATE_UPLOADS_ENV] = "1"
    if sign_in:
        env[access.AUTH_ENV] = ",".join(sign_in)
    if token and access.TOKEN in sign_in:
        env[access.TOKEN_ENV] = token
    return env


def sign_in_plan(host: str, token_file=None, no_auth: bool = False) -> tuple[access.Plan, str | None, str]:
    """The sign-in a server on `host` requires (see viewer/access.py), the access token, and
    what to say about it on start. The token comes from `token_file`, else the environment;
    OpenID Connect from an `[auth]` section of the secrets files Streamlit reads."""
    if no_auth:
        return access.plan(host, token=None, oidc=False, no_auth=True), None, ""
    try:
        if token_file:
            token = access.read_token_file(token_file)
        else:
            token = os.environ.get(access.TOKEN_ENV, "").strip() or None
        section, source = access.auth_section(access.secrets_files(Path.cwd(), Path.home(), ENTRY.parent))
    except access.AccessError as e:
        return access.Plan(refusal=str(e)), None, ""
    if section is not None:
        problem = access.oidc_problem(section)
        if problem:
            return access.Plan(refusal=f"{source}: {problem} (OpenID Connect sign-in)"), None, ""
    plan = access.plan(host, token=token, oidc=section is not None, no_auth=False)
    said = {access.TOKEN: "the access token", access.OIDC: f"OpenID Connect ([auth] in {source})"}
    what = " or ".join(said[m] for m in plan.methods)
    return plan, token, f"sign-in required: {what}" if what else ""


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


def _announce_when_ready(url: str, what: str, proc: subprocess.Popen, open_browser: bool,
                         head: "HeadStart | None" = None) -> None:
    try:
        wait_ready(url, proc, timeout=300)
        print(f"traceview: serving {what} at {url}", file=sys.stderr, flush=True)
        if open_browser:
            webbrowser.open(url)
    except (RuntimeError, TimeoutError, OSError):
        pass
    finally:
        if head is not None:
            head.end()  # the app indexes the rest, with its progress on its pages


def serve(paths, port: int = 8501, host: str = "127.0.0.1", headless: bool = False,
          private_uploads: bool = False, token_file=None, no_auth: bool = False,
          library: str | None = None, jobs: int | None = None) -> int:
    """Start the app on `paths` (the bundled samples when empty; the whole `library` when one
    is named and no path is); returns Streamlit's exit code. The paths are indexed into the
    library (`jobs` processes) while the app already answers.
    With `private_uploads`, an upload's traces open only in the browser session that uploaded it.
    Beyond loopback it requires a sign-in (`sign_in_plan`) unless `no_auth`.
    Its address is printed once, when it answers; a port already taken is said before starting."""
    paths = list(paths or [])
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        for p in missing:
            print(f"traceview serve: no such file or folder: {p}", file=sys.stderr)
        return 2
    location, problem = _library_location(library)
    if problem:
        print(f"traceview serve: {problem}", file=sys.stderr)
        return 2
    plan, token, sign_in = sign_in_plan(host, token_file, no_auth)
    problem = plan.refusal or port_problem(host, port)
    if problem:
        print(f"traceview serve: {problem}", file=sys.stderr)
        return 2
    if plan.warning:
        print(f"traceview serve: warning: {plan.warning}", file=sys.stderr)
    if sign_in:
        print(f"traceview: {sign_in}", file=sys.stderr)
    env = child_env(private_uploads, sign_in=plan.methods, token=token, library=location,
                    whole_library=bool(library) and not paths, jobs=jobs)
    head = HeadStart.begin(paths, location)
    if head is not None:
        env[HEAD_START_ENV] = head.lock_path
    proc = subprocess.Popen(command(paths, port, host), env=env)
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    url = f"http://{shown}:{int(port)}/"
    from viewer.library.library import shown_location

    what = (", ".join(map(str, paths)) if paths else f"the library {shown_location(location)}" if library
            else "the bundled samples")
    print(f"traceview: starting on {what}…", file=sys.stderr, flush=True)
    threading.Thread(target=_announce_when_ready, args=(url, what, proc, not headless and _can_open_browser(), head),
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
        if head is not None:
            head.end()


class HeadStart:
    """`serve` indexes the paths it was given while the app's process starts.

    The app's start (Python, Streamlit, the pages' imports) keeps one core busy for a second or
    two before it listens, and only then does it begin to read the files; meanwhile the other
    core idles. So `serve` runs `traceview index PATHS --jobs 1` on the app's library at once,
    holding a lock on a temporary file whose path the app gets in HEAD_START_ENV: the app's
    first index waits for that lock (`wait_for_head_start`) and finds those files indexed.
    Once the app answers, the head start is asked to stop (SIGTERM: it stops after the batch
    of files it is cooking), so that the app's own index, whose progress its pages show, does
    the rest. The app depends on none of it: whatever the head start did not write, the app
    cooks. Without `fcntl` (Windows) there is no head start."""

    def __init__(self, proc: subprocess.Popen, lock_path: str):
        self.proc, self.lock_path = proc, lock_path
        self._ended = threading.Lock()

    @classmethod
    def begin(cls, paths, location: str) -> "HeadStart | None":
        if not paths:
            return None  # the bundled samples are small, a whole library is indexed already
        try:
            import fcntl
        except ImportError:
            return None
        fd, lock_path = tempfile.mkstemp(prefix="traceview-start-", suffix=".lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # The index process inherits the locked file: the lock is released when it exits.
            proc = subprocess.Popen([sys.executable, "-m", "viewer.cli", "index", *map(os.path.realpath, paths),
                                     "--library", location, "--jobs", "1"], pass_fds=(fd,),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            os.unlink(lock_path)
            return None
        finally:
            os.close(fd)
        return cls(proc, lock_path)

    def end(self) -> None:
        """Ask the head start to stop after its batch, wait for it, remove the lock file."""
        with self._ended:
            stop(self.proc, timeout=600)  # a batch of files can take a while to cook
            if os.path.exists(self.lock_path):
                os.unlink(self.lock_path)


def wait_for_head_start() -> None:
    """In the app, before its first index: wait until `serve`'s head start (if any) has ended."""
    path = os.environ.pop(HEAD_START_ENV, "")
    if not path:
        return
    try:
        import fcntl

        with open(path, "rb") as f:
            fcntl.flock(f, fcntl.LOCK_SH)
    except (ImportError, OSError):  # the file is gone: the head start has ended
        pass


def _library_location(library: str | None) -> tuple[str, str | None]:
    """Where the app keeps its library (an absolute path, or a URL), opened once here so that a
    library that cannot be used is said before anything starts."""
    from viewer.library.library import Library, LibraryError, default_location, shown_location

    location = library or default_location()
    if "://" not in location:
        location = str(Path(location).expanduser().resolve())
    try:
        Library(location).close()
    except LibraryError as e:
        return location, str(e)
    except Exception as e:  # noqa: BLE001 - a driver's own error, said in one line
        return location, f"cannot open the library {shown_location(location)}: {type(e).__name__}: {e}"
    return location, None


# -- a running app, for tests and benchmarks ----------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(paths, port: int, *, host: str = "127.0.0.1", log=None, cwd=None, options=(),
          env=None) -> subprocess.Popen:
    """`traceview serve PATH... --headless [options]` in a child process (with `env`, this
    process's environment plus those variables); see `wait_ready`."""
    exe = Path(sys.executable).with_name("traceview")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "viewer.cli"]
    return subprocess.Popen([*cmd, "serve", *map(str, paths), "--port", str(port), "--host", host, "--headless",
                             *options], stdout=log, stderr=subprocess.STDOUT if log else None, cwd=cwd,
                            env={**os.environ, **env} if env else None)


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


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Running:
    """`traceview serve PATH... [options]` on a free port until `stop()`, bound to `host` and
    with `env` added to its environment; its output goes to a log file in `log_dir`. For tests
    and benchmarks that drive the real app."""

    def __init__(self, paths, log_dir: Path, options=(), *, host: str = "127.0.0.1", env=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"  # bound to `host`, reached over loopback
        self.log = open(Path(log_dir) / f"serve-{self.port}.log", "wb")
        self.proc = spawn(paths, self.port, host=host, log=self.log, cwd=log_dir, options=options, env=env)
        try:
            wait_ready(self.url, self.proc)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> None:
        stop(self.proc)
        self.log.close()
