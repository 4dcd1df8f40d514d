"""The sign-in of a server bound beyond loopback, in Chromium: `traceview serve --host 0.0.0.0`
with a shared access token (TRACEVIEW_TOKEN), browsed over 127.0.0.1. Until the browser signs
in, every page is the sign-in form and no trace reaches it; a wrong token is refused; the right
one in `?token=` opens the page asked for and leaves the URL. OpenID Connect signs in and out
against a provider of the test's own. Screenshots of the sign-in page at 1400x1000 and 1280x720
go to TRACEVIEW_SHOTS when set (else a tmp folder)."""
from __future__ import annotations

import http.server
import json
import shutil
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from parsers import pipeline
from viewer import access, serve

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "sample_data" / "api_logs" / "openai_chat.jsonl"
TOKEN = "e2e-Token-7f3a9c"
SECRET_TEXT = "where is order 4471"  # the first user message of LOG
SIZES = ((1400, 1000), (1280, 720))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("auth")
    data = d / "data"
    data.mkdir()
    shutil.copy(LOG, data / LOG.name)
    (d / "home").mkdir()
    tid = pipeline.cook_paths([data])[0]["traces"][0]["id"]
    server = serve.Running([data], d, host="0.0.0.0", env={access.TOKEN_ENV: TOKEN, "HOME": str(d / "home")})
    yield server, tid
    server.stop()


def ready(page) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
    page.wait_for_timeout(300)


def sign_in_form(page):
    form = page.get_by_test_id("stForm")
    form.get_by_label("Access token").wait_for()
    return form


def assert_nothing_shown(page) -> None:
    html = page.content()
    assert SECRET_TEXT not in html and "Open traces" not in html
    assert page.get_by_test_id("stSidebar").count() == 0 or not page.get_by_test_id("stSidebar").is_visible()


def test_every_page_is_the_sign_in_form(served, page, shots_dir):
    server, tid = served
    page.goto(f"{server.url}/timeline?trace={tid}")
    sign_in_form(page)
    ready(page)
    assert page.get_by_role("heading", name="Sign in").is_visible()
    assert_nothing_shown(page)
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots_dir / f"auth_sign_in_{w}x{h}.png"))


def test_a_wrong_token_is_refused(served, page):
    server, tid = served
    page.goto(f"{server.url}/timeline?trace={tid}&token=not-{TOKEN}")
    form = sign_in_form(page)
    page.get_by_text("Wrong access token.").wait_for()
    assert "token=" not in page.url  # taken out of the address, right or wrong
    assert TOKEN not in page.content()
    assert_nothing_shown(page)
    form.get_by_label("Access token").fill(TOKEN[:-1])
    form.get_by_role("button", name="Sign in").click()
    ready(page)
    page.get_by_text("Wrong access token.").wait_for()
    assert_nothing_shown(page)


def test_the_right_token_opens_the_app_and_leaves_the_url(served, page):
    server, tid = served
    page.goto(f"{server.url}/?token={TOKEN}")
    page.get_by_role("heading", name="Open traces").wait_for()
    page.wait_for_function("!location.search.includes('token')")
    assert TOKEN not in page.url
    page.wait_for_function(f"document.cookie.includes('{access.COOKIE}=')")
    # another tab of the same browser needs no token, and lands on the trace it names
    other = page.context.new_page()
    other.goto(f"{server.url}/timeline?trace={tid}")
    other.get_by_text(SECRET_TEXT).first.wait_for()
    # signing out there asks for the token again, in a new tab too
    other.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
    sign_in_form(other)
    other.wait_for_function(f"!document.cookie.includes('{access.COOKIE}=')")
    third = page.context.new_page()
    third.goto(f"{server.url}/")
    sign_in_form(third)
    ready(third)
    assert_nothing_shown(third)


def test_the_form_signs_in_on_the_page_asked_for(served, page):
    server, tid = served
    page.goto(f"{server.url}/timeline?trace={tid}")
    form = sign_in_form(page)
    form.get_by_label("Access token").fill(TOKEN)
    form.get_by_role("button", name="Sign in").click()
    page.get_by_text(SECRET_TEXT).first.wait_for()
    assert "/timeline" in page.url and f"trace={tid}" in page.url


# -- OpenID Connect, against a provider of the test's own ------------------------------------------
class FakeProvider(http.server.ThreadingHTTPServer):
    """An OpenID Connect provider that signs everyone in as ada@example.com: discovery, the
    authorization endpoint (straight back with a code), the token endpoint (a signed ID token
    carrying the nonce it was given) and its keys."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), FakeProviderHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        from joserfc import jwk

        self.key = jwk.RSAKey.generate_key(2048, parameters={"kid": "k1"})
        self.nonces: dict[str, str] = {}


class FakeProviderHandler(http.server.BaseHTTPRequestHandler):
    server: FakeProvider

    def log_message(self, *args):
        pass

    def _json(self, obj) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        base = self.server.url
        if url.path == "/.well-known/openid-configuration":
            self._json({"issuer": base, "authorization_endpoint": f"{base}/authorize",
                        "token_endpoint": f"{base}/token", "jwks_uri": f"{base}/jwks",
                        "response_types_supported": ["code"], "subject_types_supported": ["public"],
                        "id_token_signing_alg_values_supported": ["RS256"]})
        elif url.path == "/jwks":
            self._json({"keys": [self.server.key.as_dict(private=False)]})
        elif url.path == "/authorize":
            self.server.nonces["the-code"] = q.get("nonce", "")
            self.send_response(302)
            back = urllib.parse.urlencode({"code": "the-code", "state": q["state"]})
            self.send_header("Location", f"{q['redirect_uri']}?{back}")
            self.end_headers()
        else:
            self.send_error(404)

    def do_POST(self):
        from joserfc import jwt

        form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
        now = int(time.time())
        claims = {"iss": self.server.url, "sub": "ada", "aud": "traceview", "iat": now, "exp": now + 600,
                  "nonce": self.server.nonces.get(form.get("code"), ""), "email": "ada@example.com"}
        id_token = jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.server.key)
        self._json({"access_token": "at", "token_type": "Bearer", "expires_in": 600, "id_token": id_token})


@pytest.fixture(scope="module")
def provider():
    pytest.importorskip("authlib", reason="OpenID Connect sign-in needs Authlib")
    server = FakeProvider()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_openid_connect_sign_in_and_out(provider, tmp_path, page):
    (tmp_path / "home").mkdir()
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(f"""[auth]
redirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"
cookie_secret = "{'k' * 40}"
client_id = "traceview"
client_secret = "not-a-real-secret"
server_metadata_url = "{provider.url}/.well-known/openid-configuration"
""")
    shutil.copy(LOG, tmp_path / LOG.name)
    server = serve.Running([tmp_path / LOG.name], tmp_path, host="0.0.0.0", env={"HOME": str(tmp_path / "home")})
    try:
        page.goto(f"{server.url}/")
        page.get_by_role("button", name="Sign in with your account").click()
        page.get_by_role("heading", name="Open traces").wait_for()
        assert page.url.startswith(server.url)
        page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
        page.get_by_role("button", name="Sign in with your account").wait_for()
        ready(page)
        assert_nothing_shown(page)
    finally:
        server.stop()
