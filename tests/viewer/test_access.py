"""viewer.access: which addresses are loopback, the token check, the secrets' [auth] section
and what `serve` decides from them."""
from __future__ import annotations

import pytest

from viewer import access

COMPLETE = {"redirect_uri": "https://tv.example/oauth2callback", "cookie_secret": "c" * 32,
            "client_id": "id", "client_secret": "secret",
            "server_metadata_url": "https://idp.example/.well-known/openid-configuration"}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "127.255.255.254", "::1", "[::1]",
                                  "localhost", "LOCALHOST", "localhost.", "::ffff:127.0.0.1"])
def test_loopback_addresses(host):
    assert access.is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.20", "10.0.0.1", "128.0.0.1",
                                  "example.com", "localhost.example.com", "my-laptop", "::ffff:10.0.0.1",
                                  "127.0.0.1.example.com"])
def test_addresses_other_machines_reach(host):
    assert not access.is_loopback(host)


def test_token_check():
    assert access.token_matches("s3cret", "s3cret")
    assert not access.token_matches("s3cre", "s3cret")
    assert not access.token_matches("s3cret ", "s3cret")
    assert not access.token_matches("", "")  # no token configured: nothing matches
    assert not access.token_matches(None, "s3cret")
    assert not access.token_matches(["s3cret"], "s3cret")  # a repeated query parameter
    assert access.token_matches("jeton-é-🔑", "jeton-é-🔑")
    assert not access.token_matches("\udcff", "x")  # a lone surrogate neither crashes nor matches


def test_the_check_is_constant_time(monkeypatch):
    seen = []
    real = access.hmac.compare_digest
    monkeypatch.setattr(access.hmac, "compare_digest", lambda a, b: seen.append((a, b)) or real(a, b))
    assert access.token_matches("abc", "abc")
    assert seen == [(b"abc", b"abc")]


def test_the_cookie_is_derived_from_the_token_not_the_token():
    value = access.session_value("s3cret")
    assert "s3cret" not in value and len(value) == 64 and int(value, 16) >= 0
    assert value == access.session_value("s3cret")
    assert value != access.session_value("s3cret2")


def test_a_cookie_counts_only_for_the_token_it_was_set_for():
    assert access.session_matches(access.session_value("s3cret"), "s3cret")
    assert not access.session_matches(access.session_value("s3cret"), "other")
    assert not access.session_matches("s3cret", "s3cret")  # the token itself is not the cookie
    assert not access.session_matches(None, "s3cret")
    assert not access.session_matches(access.session_value(""), "")  # no token configured: none counts


def test_methods_from_the_environment():
    assert access.methods({}) == []
    assert access.methods({access.AUTH_ENV: ""}) == []
    assert access.methods({access.AUTH_ENV: "token"}) == ["token"]
    assert access.methods({access.AUTH_ENV: "token, oidc"}) == ["token", "oidc"]


def test_token_file(tmp_path):
    f = tmp_path / "token"
    f.write_text("  s3cret-tok\n")
    assert access.read_token_file(f) == "s3cret-tok"
    f.write_text("\n \n")
    with pytest.raises(access.AccessError, match=f"the token file {f} is empty"):
        access.read_token_file(f)
    f.write_bytes(b"\xff\xfe")
    with pytest.raises(access.AccessError, match="not UTF-8"):
        access.read_token_file(f)
    with pytest.raises(access.AccessError, match="cannot read the token file .*nope"):
        access.read_token_file(tmp_path / "nope")


def test_secrets_files_in_streamlits_order(tmp_path):
    home, cwd, script = tmp_path / "home", tmp_path / "work", tmp_path / "app"
    assert access.secrets_files(cwd, home, script) == [
        home / ".streamlit" / "secrets.toml", cwd / ".streamlit" / "secrets.toml",
        script / ".streamlit" / "secrets.toml"]
    assert access.secrets_files(cwd, home, cwd) == [home / ".streamlit" / "secrets.toml",
                                                    cwd / ".streamlit" / "secrets.toml"]


def test_the_auth_section_of_the_last_file_that_has_one(tmp_path):
    a, b, c = (tmp_path / n for n in ("a.toml", "b.toml", "c.toml"))
    a.write_text('[auth]\nredirect_uri = "from-a"\n')
    b.write_text('[other]\nx = 1\n')
    assert access.auth_section([a, b, tmp_path / "missing.toml"]) == ({"redirect_uri": "from-a"}, a)
    c.write_text('[auth]\nredirect_uri = "from-c"\n')
    assert access.auth_section([a, c, b]) == ({"redirect_uri": "from-c"}, c)
    assert access.auth_section([b]) == (None, None)
    b.write_text("[auth\n")
    with pytest.raises(access.AccessError, match=f"{b} is not valid TOML"):
        access.auth_section([a, b])


def test_providers_of_an_auth_section():
    assert access.oidc_providers(COMPLETE) == [None]
    named = {"redirect_uri": "r", "cookie_secret": "c",
             "google": {"client_id": "i", "client_secret": "s", "server_metadata_url": "u"},
             "microsoft": {"client_id": "i", "client_secret": "s", "server_metadata_url": "u"},
             "client_kwargs": {"prompt": "login"}}
    assert access.oidc_providers(named) == ["google", "microsoft"]
    assert access.oidc_providers({"redirect_uri": "r"}) == []
    assert access.oidc_providers("not a table") == []


@pytest.mark.parametrize("change, problem", [
    ({"redirect_uri": None}, "[auth] lacks redirect_uri"),
    ({"cookie_secret": ""}, "[auth] lacks cookie_secret"),
    ({"client_secret": None}, "[auth] lacks client_secret"),
    ({"client_id": None, "client_secret": None, "server_metadata_url": None},
     "[auth] names no provider (client_id, client_secret, server_metadata_url)"),
    ({"my_idp": {"client_id": "i", "client_secret": "s", "server_metadata_url": "u"}},
     "[auth.my_idp]: a provider name cannot contain an underscore"),
    ({"okta": {"client_id": "i"}}, "[auth.okta] lacks client_secret, server_metadata_url"),
])
def test_what_keeps_an_auth_section_from_working(change, problem, monkeypatch):
    monkeypatch.setattr(access, "authlib_problem", lambda: None)
    section = {k: v for k, v in {**COMPLETE, **change}.items() if v is not None}
    assert access.oidc_problem(section) == problem
    assert access.oidc_problem(COMPLETE) is None
    assert access.oidc_problem(["auth"]) == "[auth] must be a table"


def test_sign_in_needs_authlib(monkeypatch):
    versions = {"Authlib": "1.3.1"}

    def version(name):
        if name not in versions:
            raise access.importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(access.importlib.metadata, "version", version)
    assert "1.3.2 or later (installed: 1.3.1)" in access.oidc_problem(COMPLETE)
    versions["Authlib"] = "1.10.0"
    assert access.oidc_problem(COMPLETE) is None
    del versions["Authlib"]
    assert "needs Authlib" in access.oidc_problem(COMPLETE)


def test_beyond_loopback_a_sign_in_is_required():
    refused = access.plan("0.0.0.0", token=None, oidc=False, no_auth=False)
    assert refused.methods == () and refused.refusal
    for way in ("--token-file", access.TOKEN_ENV, "[auth]", ".streamlit/secrets.toml", "--no-auth"):
        assert way in refused.refusal
    assert access.plan("192.168.1.20", token="t", oidc=False, no_auth=False) == access.Plan(methods=("token",))
    assert access.plan("::", token=None, oidc=True, no_auth=False) == access.Plan(methods=("oidc",))
    assert access.plan("", token="t", oidc=True, no_auth=False).methods == ("token", "oidc")


def test_on_loopback_nothing_is_asked_unless_configured():
    assert access.plan("127.0.0.1", token=None, oidc=False, no_auth=False) == access.Plan()
    # configured, it is required there too (a reverse proxy on this machine makes loopback public)
    assert access.plan("localhost", token="t", oidc=False, no_auth=False).methods == ("token",)


def test_no_auth_beyond_loopback_warns():
    plan = access.plan("0.0.0.0", token=None, oidc=False, no_auth=True)
    assert plan.methods == () and plan.refusal is None and "--no-auth" in plan.warning
    assert access.plan("127.0.0.1", token=None, oidc=False, no_auth=True) == access.Plan()
