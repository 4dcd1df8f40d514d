"""The sign-in page a served app shows instead of any other page until the browser signs in,
and the sidebar's "Sign out". The rules (which methods, the token check) are viewer/access.py;
`traceview serve` sets the methods in the app's environment.

A shared access token is proved by `?token=...` once (the parameter leaves the URL at once,
right or wrong) or in the form; the session then stays signed in, and a cookie derived from
the token spares the same browser's other tabs and reloads from proving it again.
OpenID Connect is Streamlit's own `st.login` / `st.user` / `st.logout`.
"""
from __future__ import annotations

import os

import streamlit as st

from viewer import access

SIGNED_IN = "tv_signed_in"  # session key: this session proved the token
SIGNED_OUT = "tv_signed_out"  # session key: signed out here, so the browser's cookie no longer counts
WRONG = "tv_sign_in_wrong"  # session key: the last token given was wrong
TOKEN_INPUT = "tv_token_input"
TOKEN_PARAM = "token"


def methods() -> list[str]:
    return access.methods(os.environ)


def _token() -> str:
    return os.environ.get(access.TOKEN_ENV, "")


def _prove(given) -> None:
    """Sign this session in when `given` is the token; else remember that it was wrong."""
    if access.token_matches(given, _token()):
        st.session_state[SIGNED_IN] = True
        st.session_state.pop(SIGNED_OUT, None)
        st.session_state.pop(WRONG, None)
    else:
        st.session_state[WRONG] = True


def _signed_in(required: list[str]) -> bool:
    if access.TOKEN in required:
        if TOKEN_PARAM in st.query_params:
            given = st.query_params[TOKEN_PARAM]
            del st.query_params[TOKEN_PARAM]  # out of the address bar at once
            _prove(given)
        if st.session_state.get(SIGNED_IN):
            return True
        if not st.session_state.get(SIGNED_OUT) and _cookie_set():
            st.session_state[SIGNED_IN] = True
            return True
    return access.OIDC in required and bool(st.user.is_logged_in)


def _cookie_set() -> bool:
    """Whether this browser came with the sign-in cookie of the current token."""
    return access.session_matches(st.context.cookies.get(access.COOKIE), _token())


def gate() -> bool:
    """Whether this session may see the pages; when it may not, the sign-in page is drawn."""
    required = methods()
    if not required or _signed_in(required):
        return True
    sign_in_page(required)
    return False


def _set_cookie(value: str, max_age: int | None = None) -> None:
    """Set (or, with max_age 0, remove) the sign-in cookie in this browser; the value is hex."""
    age = "" if max_age is None else f"; max-age={int(max_age)}"
    st.html("<script>document.cookie = '%s=%s; path=/; SameSite=Strict%s' + "
            "(location.protocol === 'https:' ? '; Secure' : '');</script>" % (access.COOKIE, value, age),
            unsafe_allow_javascript=True, width=1)


def sign_in_page(required: list[str]) -> None:
    if st.session_state.get(SIGNED_OUT):
        _set_cookie("", max_age=0)
    _, middle, _ = st.columns([1, 1.4, 1])
    with middle:
        st.title("Sign in")
        st.caption("This traceview server is shared: sign in to read its traces.")
        if access.TOKEN in required:
            with st.form("tv_sign_in", border=True, clear_on_submit=True):
                st.text_input("Access token", type="password", key=TOKEN_INPUT,
                              placeholder="the token the server was started with")
                st.form_submit_button("Sign in", type="primary", icon=":material/login:",
                                      on_click=lambda: _prove(st.session_state.get(TOKEN_INPUT)))
            if st.session_state.get(WRONG):
                st.error("Wrong access token.", icon=":material/block:")
        if access.OIDC in required:
            section = st.secrets.get("auth")
            for provider in access.oidc_providers(section.to_dict() if section else {}):
                label = "Sign in with your account" if provider is None else f"Sign in with {provider.capitalize()}"
                st.button(label, key=f"tv_login_{provider}", type="primary", icon=":material/account_circle:",
                          on_click=st.login, args=(provider,) if provider else ())


def sidebar() -> None:
    """"Sign out" at the foot of the sidebar of a signed-in session; a token session also
    keeps its cookie set there."""
    required = methods()
    if not required:
        return
    with st.sidebar:
        if st.session_state.get(SIGNED_IN) and not _cookie_set():
            _set_cookie(access.session_value(_token()))
        st.button("Sign out", key="tv_sign_out", icon=":material/logout:", on_click=_sign_out)


def _sign_out() -> None:
    st.session_state.pop(SIGNED_IN, None)
    st.session_state[SIGNED_OUT] = True
    if access.OIDC in methods() and st.user.is_logged_in:
        st.logout()
