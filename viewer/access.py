"""Who may use a served app: the rules `traceview serve` applies before starting and the app's
sign-in applies to every browser session (the sign-in page is viewer/pages/auth.py).

A server bound beyond loopback requires a sign-in: a shared access token, or OpenID Connect
through Streamlit's `st.login` (an `[auth]` section in Streamlit's secrets). Whatever is
configured is required on loopback too (a reverse proxy on the same machine makes a loopback
address public); with nothing configured, a loopback server asks nothing.
"""
from __future__ import annotations

import hashlib
import hmac
import importlib.metadata
import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path

# Set by `serve` for the app's process: the sign-in methods required, comma-separated
# ("token", "oidc"); absent or empty means no sign-in.
AUTH_ENV = "TRACEVIEW_AUTH"
# The shared access token itself (an environment variable keeps it out of `ps`).
TOKEN_ENV = "TRACEVIEW_TOKEN"
TOKEN = "token"
OIDC = "oidc"
# A browser that proved the token keeps this cookie, so its other tabs need not prove it again.
COOKIE = "traceview_session"
# The keys Streamlit needs for an OpenID Connect provider, and for every provider.
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
SHARED_KEYS = ("redirect_uri", "cookie_secret")
AUTHLIB_MIN = (1, 3, 2)


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches: 127.0.0.0/8, ::1 (also IPv4-mapped)
    and the name localhost. Any other name, and the empty address (every interface), is not."""
    h = (host or "").strip().strip("[]").rstrip(".").lower()
    if h == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(h.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def token_matches(given, expected) -> bool:
    """Whether `given` is the access token, compared in constant time; an empty token never matches."""
    if not isinstance(given, str) or not isinstance(expected, str) or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def session_value(token: str) -> str:
    """What the sign-in cookie holds: derived from the token (never the token itself), so
    changing the token signs every browser out."""
    return hmac.new(token.encode("utf-8", "surrogatepass"), b"traceview session", hashlib.sha256).hexdigest()


def session_matches(cookie, token: str) -> bool:
    """Whether a browser's sign-in cookie was set for this token (never without a token)."""
    return bool(token) and token_matches(cookie, session_value(token))


def methods(env) -> list[str]:
    """The sign-in methods the app's environment requires (empty: none)."""
    return [m for m in (p.strip() for p in (env.get(AUTH_ENV) or "").split(",")) if m]


class AccessError(Exception):
    """A sign-in setting that cannot be used, in plain words."""


def read_token_file(path) -> str:
    """The access token in a file: its text without surrounding whitespace (a trailing newline)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise AccessError(f"cannot read the token file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise AccessError(f"the token file {path} is not UTF-8 text") from None
    token = text.strip()
    if not token:
        raise AccessError(f"the token file {path} is empty")
    return token


def secrets_files(cwd: Path, home: Path, script_dir: Path) -> list[Path]:
    """The secrets files Streamlit reads, in its order (a later file's sections win):
    ~/.streamlit, the working directory's .streamlit, then the entry script's own .streamlit."""
    files = [Path(home) / ".streamlit" / "secrets.toml", Path(cwd) / ".streamlit" / "secrets.toml"]
    script = Path(script_dir) / ".streamlit" / "secrets.toml"
    return files if script in files else [*files, script]


def auth_section(files) -> tuple[dict | None, Path | None]:
    """The `[auth]` section Streamlit would use and the file it comes from (None, None when no
    file has one). A file that is not valid TOML raises AccessError."""
    found: tuple[dict | None, Path | None] = (None, None)
    for f in files:
        try:
            data = tomllib.loads(Path(f).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as e:
            raise AccessError(f"cannot read {f}: {getattr(e, 'strerror', None) or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise AccessError(f"{f} is not valid TOML: {e}") from None
        if "auth" in data:
            found = (data["auth"], Path(f))
    return found


def oidc_providers(section) -> list[str | None]:
    """The OpenID Connect providers an `[auth]` section configures: None for the default one
    (its keys directly in `[auth]`), else each `[auth.NAME]` sub-table's name."""
    if not isinstance(section, dict):
        return []
    default = [None] if any(k in section for k in PROVIDER_KEYS) else []
    return default + [k for k, v in section.items() if isinstance(v, dict) and any(p in v for p in PROVIDER_KEYS)]


def oidc_problem(section) -> str | None:
    """What keeps `st.login` from working with this `[auth]` section, else None."""
    if not isinstance(section, dict):
        return "[auth] must be a table"
    missing = [k for k in SHARED_KEYS if not section.get(k)]
    if missing:
        return f"[auth] lacks {', '.join(missing)}"
    providers = oidc_providers(section)
    if not providers:
        return f"[auth] names no provider ({', '.join(PROVIDER_KEYS)})"
    for name in providers:
        keys = section if name is None else section[name]
        where = "[auth]" if name is None else f"[auth.{name}]"
        if name is not None and "_" in name:
            return f"{where}: a provider name cannot contain an underscore"
        lacking = [k for k in PROVIDER_KEYS if not keys.get(k)]
        if lacking:
            return f"{where} lacks {', '.join(lacking)}"
    return authlib_problem()


def authlib_problem() -> str | None:
    """Streamlit's sign-in needs Authlib 1.3.2 or later."""
    try:
        version = importlib.metadata.version("Authlib")
    except importlib.metadata.PackageNotFoundError:
        return "OpenID Connect sign-in needs Authlib: pip install 'Authlib>=1.3.2'"
    parts = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    if parts < AUTHLIB_MIN:
        return f"OpenID Connect sign-in needs Authlib 1.3.2 or later (installed: {version})"
    return None


@dataclass(frozen=True)
class Plan:
    """What `serve` does about sign-in: the methods it requires, or why it must not start;
    and a warning to print."""
    methods: tuple[str, ...] = ()
    refusal: str | None = None
    warning: str | None = None


def plan(host: str, *, token: str | None, oidc: bool, no_auth: bool) -> Plan:
    """Which sign-in a server on `host` requires, given a token (or None), whether a usable
    `[auth]` section is configured, and `--no-auth`."""
    if no_auth:
        if is_loopback(host):
            return Plan()
        return Plan(warning=f"{host or 'every address'} is reachable from other machines and --no-auth "
                            "lets anyone who reaches it read every trace it serves")
    chosen = tuple(m for m, on in ((TOKEN, bool(token)), (OIDC, oidc)) if on)
    if chosen or is_loopback(host):
        return Plan(methods=chosen)
    return Plan(refusal=(
        f"{host or 'every address'} is reachable from other machines, so the server requires a sign-in. "
        f"Give a shared access token with --token-file FILE (or the environment variable {TOKEN_ENV}), "
        "or configure OpenID Connect in an [auth] section of .streamlit/secrets.toml, "
        "or pass --no-auth to serve without a sign-in."))
