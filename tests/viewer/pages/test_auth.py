"""The sign-in gate, run with Streamlit's AppTest: with a sign-in required (the environment
`traceview serve` sets), only the sign-in page renders until the session signs in."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viewer import access

APP = str(Path(__file__).resolve().parents[3] / "app.py")
AUTH = {"redirect_uri": "https://tv.example/oauth2callback", "cookie_secret": "c" * 32,
        "google": {"client_id": "i", "client_secret": "s", "server_metadata_url": "https://idp.example/x"}}


def run(monkeypatch, methods: str, secret: str | None = None, **params) -> AppTest:
    """The app with sign-in `methods` required, the server's token `secret`, URL `params`."""
    monkeypatch.setenv("TRACEVIEW_PATHS", "")
    monkeypatch.setenv(access.AUTH_ENV, methods)
    if secret is None:
        monkeypatch.delenv(access.TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(access.TOKEN_ENV, secret)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(params)
    return at


def titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def test_the_right_token_in_the_url_signs_in_and_leaves_it(monkeypatch):
    at = run(monkeypatch, "token", secret="s3cret", other="x").run()
    assert titles(at) == ["Sign in"] and not at.sidebar.button
    at = run(monkeypatch, "token", secret="s3cret", token="s3cret", trace="abc").run()
    assert "token" not in at.query_params and at.query_params["trace"] == "abc"
    assert titles(at) == ["Open traces"]
    assert [b.label for b in at.sidebar.button] == ["Sign out"]
    at.sidebar.button[0].click().run()
    assert titles(at) == ["Sign in"]


def test_a_wrong_token_is_refused(monkeypatch):
    at = run(monkeypatch, "token", secret="s3cret", token="s3cre").run()
    assert titles(at) == ["Sign in"] and "token" not in at.query_params
    assert [e.value for e in at.error] == ["Wrong access token."]
    at.text_input(key="tv_token_input").input("s3cret")
    at.button[0].click().run()
    assert titles(at) == ["Open traces"]


def test_no_token_configured_lets_no_one_in(monkeypatch):
    at = run(monkeypatch, "token", secret=None, token="").run()
    assert titles(at) == ["Sign in"] and [e.value for e in at.error] == ["Wrong access token."]


@pytest.mark.parametrize("logged_in", [False, True])
def test_openid_connect(monkeypatch, logged_in):
    at = run(monkeypatch, "oidc")
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": logged_in, "email": "ada@example.com"}
    at.run()
    if logged_in:
        assert titles(at) == ["Open traces"] and [b.label for b in at.sidebar.button] == ["Sign out"]
    else:
        assert titles(at) == ["Sign in"] and [b.label for b in at.button] == ["Sign in with Google"]
