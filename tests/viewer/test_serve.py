"""viewer.serve: the Streamlit command line, with the packaged settings as flags."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from streamlit import config as st_config

from viewer import access, serve


def _flags() -> dict[str, str]:
    f = serve.config_flags()
    return dict(zip(f[::2], f[1::2]))


def test_every_packaged_setting_is_a_streamlit_option():
    known = set(st_config.get_config_options())
    flags = _flags()
    assert flags
    for name in flags:
        assert name.startswith("--") and name[2:] in known, name


def test_settings_upload_limit_telemetry_and_two_themes():
    flags = _flags()
    assert int(flags["--server.maxUploadSize"]) >= 500
    assert flags["--browser.gatherUsageStats"] == "false"
    data = tomllib.loads(serve.CONFIG.read_text())
    assert {"light", "dark"} <= set(data["theme"])
    assert flags["--theme.light.backgroundColor"] != flags["--theme.dark.backgroundColor"]


def test_command_runs_the_packaged_entry_script_on_absolute_paths(tmp_path):
    (tmp_path / "a.jsonl").write_text("")
    cmd = serve.command([tmp_path / "a.jsonl"], port=9999)
    assert cmd[:5] == [sys.executable, "-m", "streamlit", "run", str(serve.ENTRY)]
    assert serve.ENTRY.is_file()
    i = cmd.index("--")
    assert cmd[i + 1:] == [str((tmp_path / "a.jsonl").resolve())]
    opts = dict(zip(cmd[5:i:2], cmd[6:i:2]))
    assert opts["--server.address"] == "127.0.0.1" and opts["--server.port"] == "9999"
    # always headless: a first start would otherwise stop to ask for an e-mail address
    assert opts["--server.headless"] == "true"
    assert serve.command([], host="0.0.0.0")[-1] == "--"


def test_serve_refuses_missing_paths(tmp_path, capsys):
    assert serve.serve([tmp_path / "nope.jsonl"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_the_checkout_config_is_the_packaged_one():
    root = Path(__file__).resolve().parents[2]
    assert (root / ".streamlit" / "config.toml").resolve() == serve.CONFIG.resolve()


def test_plain_traceview_starts_on_a_fresh_machine(tmp_path):
    """`traceview` alone, as the README launches it: no Streamlit credentials in HOME, no
    terminal on stdin, no display. It must serve the bundled samples, not wait for input."""
    import os
    import subprocess
    import urllib.request

    port = serve.free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "viewer.cli", "serve", "--port", str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, cwd=tmp_path)
    try:
        serve.wait_ready(f"http://127.0.0.1:{port}/", proc, timeout=90)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
            assert r.status == 200
    finally:
        serve.stop(proc)
    out = proc.stdout.read().decode()
    assert "Email:" not in out and "the bundled samples" in out


def test_private_uploads_option_reaches_the_app(monkeypatch):
    """`traceview serve --private-uploads` parses, reaches `serve`, and the app's process gets
    the switch the app reads; without it the switch is cleared."""
    from viewer import cli
    from viewer.pages import state

    args = cli.build_parser().parse_args(["serve", "--private-uploads", "--headless"])
    assert args.private_uploads is True
    assert cli.build_parser().parse_args(["serve"]).private_uploads is False
    seen = {}

    def fake_serve(paths, **kw):
        seen.update(kw)
        return 0

    monkeypatch.setattr(serve, "serve", fake_serve)
    assert cli.main(["serve", "--private-uploads", "--headless"]) == 0
    assert seen["private_uploads"] is True
    assert serve.PRIVATE_UPLOADS_ENV == state.PRIVATE_ENV
    env = serve.child_env(True, base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", state.PRIVATE_ENV: "1"}
    assert state.PRIVATE_ENV not in serve.child_env(False, base={state.PRIVATE_ENV: "1"})
    monkeypatch.setenv(state.PRIVATE_ENV, "1")
    assert state.private_uploads()
    monkeypatch.delenv(state.PRIVATE_ENV)
    assert not state.private_uploads()


def test_a_busy_port_is_said_plainly_before_starting(capsys):
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert "in use" in serve.port_problem("127.0.0.1", port)
        assert serve.serve([], port=port, headless=True) == 2
    err = capsys.readouterr().err
    assert f"port {port} is already in use" in err and "--port" in err
    assert "serving" not in err and "http://" not in err  # nothing claims to serve
    assert serve.port_problem("127.0.0.1", serve.free_port()) is None


def test_one_address_is_printed():
    """Streamlit's own welcome (its Local / Network / External URLs) is hidden: `serve`
    prints the app's address itself, once it answers."""
    cmd = serve.command([], port=9999)
    opts = dict(zip(cmd[5:cmd.index("--"):2], cmd[6:cmd.index("--"):2]))
    assert opts["--logger.hideWelcomeMessage"] == "true"


def test_the_prices_file_reaches_the_app(tmp_path, monkeypatch):
    from viewer import cli

    prices = tmp_path / "p.toml"
    prices.write_text('[models."m"]\ninput = 1\noutput = 2\n')
    monkeypatch.delenv("TRACEVIEW_PRICES", raising=False)
    monkeypatch.setattr(serve, "serve", lambda paths, **kw: 0)
    assert cli.main(["serve", "--headless", "--prices", str(prices)]) == 0
    assert serve.child_env()["TRACEVIEW_PRICES"] == str(prices.resolve())


# -- a sign-in beyond loopback -------------------------------------------------------------------
AUTH_TOML = """[auth]
redirect_uri = "https://tv.example/oauth2callback"
cookie_secret = "0123456789abcdef0123456789abcdef"
client_id = "traceview"
client_secret = "not-a-real-secret"
server_metadata_url = "https://idp.example/.well-known/openid-configuration"
"""


@pytest.fixture
def no_secrets(tmp_path, monkeypatch):
    """A working directory and a HOME without Streamlit secrets, and no token in the environment."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.delenv(access.TOKEN_ENV, raising=False)
    return tmp_path


class FakeChild:
    """Stands for Streamlit's process: records its command line and environment, exits at once.
    (`serve`'s head start, a `traceview index` process, is recorded apart.)"""
    started: list = []
    head_starts: list = []

    def __init__(self, cmd, env=None, **_kw):
        self.cmd, self.env, self.returncode = cmd, env, 0
        (FakeChild.started if "streamlit" in cmd else FakeChild.head_starts).append(self)

    def poll(self):
        return 0

    def wait(self, timeout=None):
        return 0

    def send_signal(self, _signum):
        pass


@pytest.fixture
def fake_child(monkeypatch):
    FakeChild.started, FakeChild.head_starts = [], []
    monkeypatch.setattr(serve.subprocess, "Popen", FakeChild)
    return FakeChild.started


def test_a_public_address_without_a_sign_in_is_refused(no_secrets, fake_child, capsys):
    from viewer import cli

    assert cli.main(["serve", "--host", "0.0.0.0", "--port", str(serve.free_port()), "--headless"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("traceview serve: 0.0.0.0 is reachable from other machines")
    for way in ("--token-file", "TRACEVIEW_TOKEN", "[auth] section of .streamlit/secrets.toml", "--no-auth"):
        assert way in err
    assert fake_child == []  # nothing started


def test_loopback_asks_nothing(no_secrets, fake_child, capsys):
    assert serve.serve([], port=serve.free_port(), headless=True) == 0
    env = fake_child[0].env
    assert access.AUTH_ENV not in env and access.TOKEN_ENV not in env
    assert "sign-in" not in capsys.readouterr().err


def test_the_token_reaches_the_app_through_the_environment_only(no_secrets, fake_child, capsys):
    token = "tok-" + "x7Q" * 10
    f = no_secrets / "token.txt"
    f.write_text(token + "\n")
    assert serve.serve([], port=serve.free_port(), host="0.0.0.0", headless=True, token_file=f) == 0
    child = fake_child[0]
    assert not any(token in a for a in child.cmd)
    assert child.env[access.TOKEN_ENV] == token and child.env[access.AUTH_ENV] == "token"
    assert "sign-in required: the access token" in capsys.readouterr().err


def test_the_token_from_the_environment(no_secrets, fake_child, monkeypatch):
    monkeypatch.setenv(access.TOKEN_ENV, "from-env")
    assert serve.serve([], port=serve.free_port(), host="::", headless=True) == 0
    assert fake_child[0].env[access.TOKEN_ENV] == "from-env"
    assert fake_child[0].env[access.AUTH_ENV] == "token"


def test_an_unusable_token_file_is_said(no_secrets, fake_child, capsys):
    empty = no_secrets / "empty"
    empty.write_text("\n")
    assert serve.serve([], port=serve.free_port(), host="0.0.0.0", headless=True, token_file=empty) == 2
    assert f"traceview serve: the token file {empty} is empty" in capsys.readouterr().err
    assert fake_child == []


def test_an_auth_section_in_the_working_directory_means_openid_connect(no_secrets, fake_child, capsys):
    pytest.importorskip("authlib")
    secrets = no_secrets / "work" / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(AUTH_TOML)
    assert serve.serve([], port=serve.free_port(), host="0.0.0.0", headless=True) == 0
    assert fake_child[0].env[access.AUTH_ENV] == "oidc" and access.TOKEN_ENV not in fake_child[0].env
    assert f"OpenID Connect ([auth] in {secrets})" in capsys.readouterr().err


def test_an_incomplete_auth_section_in_home_is_said(no_secrets, fake_child, capsys):
    secrets = no_secrets / "home" / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir()
    secrets.write_text(AUTH_TOML.replace("cookie_secret", "# cookie_secret"))
    assert serve.serve([], port=serve.free_port(), host="0.0.0.0", headless=True) == 2
    assert f"traceview serve: {secrets}: [auth] lacks cookie_secret" in capsys.readouterr().err
    assert fake_child == []


def test_no_auth_clears_the_sign_in_and_warns(no_secrets, fake_child, monkeypatch, capsys):
    from viewer import cli

    monkeypatch.setenv(access.TOKEN_ENV, "ambient")
    assert cli.main(["serve", "--host", "0.0.0.0", "--port", str(serve.free_port()), "--headless",
                     "--no-auth"]) == 0
    env = fake_child[0].env
    assert access.AUTH_ENV not in env and access.TOKEN_ENV not in env
    assert "warning: 0.0.0.0 is reachable from other machines" in capsys.readouterr().err
    assert cli.main(["serve", "--no-auth", "--token-file", "t"]) == 2  # one or the other


def test_starts_on_a_public_address_with_no_auth(tmp_path, monkeypatch):
    """A real server bound to every address with --no-auth answers (Running waits for its
    health check), after its warning."""
    monkeypatch.delenv(access.TOKEN_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    running = serve.Running([], tmp_path, options=["--no-auth"], host="0.0.0.0")
    running.stop()
    assert "warning: 0.0.0.0 is reachable from other machines" in Path(running.log.name).read_text()


def test_a_blank_token_in_the_environment_is_no_token(no_secrets, fake_child, monkeypatch, capsys):
    monkeypatch.setenv(access.TOKEN_ENV, "  ")
    assert serve.serve([], port=serve.free_port(), host="0.0.0.0", headless=True) == 2
    assert "requires a sign-in" in capsys.readouterr().err and fake_child == []


def test_a_named_library_without_paths_is_shown_whole(tmp_path, fake_child, capsys, monkeypatch):
    from viewer import cli

    lib = tmp_path / "team.sqlite"
    assert cli.main(["serve", "--library", str(lib), "--jobs", "2", "--port", str(serve.free_port()),
                     "--headless"]) == 0
    env = fake_child[0].env
    assert env[serve.LIBRARY_ENV] == str(lib.resolve()) and env[serve.WHOLE_LIBRARY_ENV] == "1"
    assert env[serve.JOBS_ENV] == "2"
    assert f"starting on the library {lib.resolve()}" in capsys.readouterr().err
    # With paths, the library holds them and the app shows just those.
    assert cli.main(["serve", str(tmp_path), "--library", str(lib), "--port", str(serve.free_port()),
                     "--headless"]) == 0
    env = fake_child[1].env
    assert env[serve.LIBRARY_ENV] == str(lib.resolve()) and serve.WHOLE_LIBRARY_ENV not in env


def test_a_library_that_cannot_be_used_is_said_before_starting(tmp_path, fake_child, capsys):
    bad = tmp_path / "not-a-library.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert serve.serve([], port=serve.free_port(), headless=True, library=str(bad)) == 2
    err = capsys.readouterr().err
    assert err.startswith("traceview serve: ") and "not-a-library.sqlite" in err and fake_child == []


def test_a_librarys_password_is_never_printed():
    from viewer.library.library import shown_location

    assert shown_location("postgresql://team:s3cret@db.example/traceview") == "postgresql://team:***@db.example/traceview"
    assert shown_location("/data/library.sqlite") == "/data/library.sqlite"


def test_serve_checks_the_library_without_importing_the_cook(tmp_path):
    """`traceview serve` opens the library before it starts the app (to say plainly when it
    cannot be used); that check must not import the cook, pandas or the price list, which
    took most of a second before the app's own process could start."""
    code = ("import sys; from viewer import serve; "
            f"print(serve._library_location({str(tmp_path / 'lib.sqlite')!r})); "
            "print(sorted(m for m in ('parsers.pipeline', 'pandas', 'genai_prices', 'jsonschema') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == repr((str(tmp_path / "lib.sqlite"), None))  # the library opened
    assert out[1] == "[]"


def test_the_head_start_indexes_the_paths_and_the_app_waits_for_it(tmp_path, monkeypatch):
    """`serve` indexes the given paths in a `traceview index` process while the app starts;
    the app's first index waits for the lock that process holds, then finds every file
    indexed (nothing left to cook), and the lock file goes with the head start."""
    import shutil

    from parsers import pipeline
    from viewer.library.library import Library, Scope

    repo = Path(__file__).resolve().parents[2]
    folder = tmp_path / "logs"
    shutil.copytree(repo / "sample_data" / "api_logs", folder)
    location = str(tmp_path / "lib.sqlite")
    head = serve.HeadStart.begin([folder], location)
    assert head is not None and Path(head.lock_path).exists()
    monkeypatch.setenv(serve.HEAD_START_ENV, head.lock_path)
    serve.wait_for_head_start()  # returns once the index process has exited
    assert head.proc.wait(timeout=30) == 0 and serve.HEAD_START_ENV not in os.environ
    lib = Library(location)
    try:
        doc, _ = pipeline.cook_paths([folder])
        assert set(lib.runs_in(Scope(paths=(str(folder),)))) == {t["id"] for t in doc["traces"]}
        again = lib.index([str(folder)])
        assert again.files == len(list(folder.iterdir())) and again.to_cook == 0
    finally:
        lib.close()
    head.end()
    assert not Path(head.lock_path).exists()
    serve.wait_for_head_start()  # no head start: returns at once


def test_the_app_waits_while_the_head_start_holds_its_lock(tmp_path, monkeypatch):
    import fcntl

    lock = tmp_path / "start.lock"
    lock.write_bytes(b"")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(1.5)", str(lock)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    monkeypatch.setenv(serve.HEAD_START_ENV, str(lock))
    t0 = time.monotonic()
    serve.wait_for_head_start()
    assert time.monotonic() - t0 > 0.5 and holder.wait(timeout=10) == 0
    with open(lock, "rb") as f:  # released
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_serve_with_paths_starts_a_head_start_on_the_apps_library(tmp_path, fake_child, capsys):
    assert serve.serve([tmp_path], port=serve.free_port(), headless=True, library=str(tmp_path / "l.sqlite")) == 0
    (app,), (head,) = fake_child, FakeChild.head_starts
    assert app.env[serve.HEAD_START_ENV].endswith(".lock")
    assert head.cmd[1:] == ["-m", "viewer.cli", "index", str(tmp_path.resolve()), "--library",
                            str((tmp_path / "l.sqlite").resolve()), "--jobs", "1"]
    assert not Path(app.env[serve.HEAD_START_ENV]).exists()  # removed once serve ended
    # Without paths (the bundled samples, or a whole library) there is none.
    assert serve.serve([], port=serve.free_port(), headless=True) == 0
    assert len(FakeChild.head_starts) == 1 and serve.HEAD_START_ENV not in fake_child[1].env
