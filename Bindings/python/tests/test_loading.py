"""Which libswiftpush.so the package loads: $SWIFTPUSH_LIBRARY, else a wheel's own, else the system's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swiftpush import _ffi


def test_the_loaded_library_is_the_one_swiftpush_library_names_or_else_the_one_beside_the_package() -> None:
    beside = Path(_ffi.__file__).resolve().parent / _ffi.LIBRARY_NAME
    explicit = os.environ.get(_ffi.LIBRARY_ENV)
    if explicit:
        assert _ffi.lib._name == explicit
    elif beside.exists():  # an installed wheel
        assert Path(_ffi.lib._name).resolve() == beside
    else:
        pytest.skip("neither SWIFTPUSH_LIBRARY nor a library beside the package: the system's library path")


def test_a_library_beside_the_package_is_the_only_candidate_unless_swiftpush_library_is_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "swiftpush"
    package.mkdir()
    (package / _ffi.LIBRARY_NAME).write_bytes(b"")
    monkeypatch.setattr(_ffi, "__file__", str(package / "_ffi.py"))
    monkeypatch.delenv(_ffi.LIBRARY_ENV, raising=False)
    assert _ffi._candidates() == [str(package / _ffi.LIBRARY_NAME)]
    monkeypatch.setenv(_ffi.LIBRARY_ENV, "/elsewhere/libswiftpush.so")
    assert _ffi._candidates() == ["/elsewhere/libswiftpush.so"]


def test_without_a_library_beside_the_package_the_system_library_path_is_searched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ffi, "__file__", str(tmp_path / "_ffi.py"))
    monkeypatch.delenv(_ffi.LIBRARY_ENV, raising=False)
    assert _ffi._candidates()[-1] == _ffi.LIBRARY_NAME  # the dynamic loader's own search comes last


def test_a_client_given_no_ca_file_is_given_the_first_system_bundle_only_when_the_wheels_openssl_cannot_find_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundles = [tmp_path / "missing.crt", tmp_path / "fedora.crt", tmp_path / "alpine.pem"]
    bundles[1].write_text("")
    bundles[2].write_text("")
    monkeypatch.setattr(_ffi, "SYSTEM_CA_BUNDLES", tuple(map(str, bundles)))
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    # Not a wheel's library: OpenSSL's defaults are the system's own.
    monkeypatch.setattr(_ffi, "_vendored_openssl_paths", lambda: ())
    assert _ffi.system_ca_file() is None
    # A wheel's OpenSSL on a system that has its trust store paths (Debian, Ubuntu).
    monkeypatch.setattr(_ffi, "_vendored_openssl_paths", lambda: (str(bundles[1]), str(tmp_path / "certs")))
    assert _ffi.system_ca_file() is None
    # ... on one that has not (Fedora: no /usr/lib/ssl): the first bundle there is.
    monkeypatch.setattr(_ffi, "_vendored_openssl_paths", lambda: (str(tmp_path / "cert.pem"), str(tmp_path / "certs")))
    assert _ffi.system_ca_file() == str(bundles[1])
    # OpenSSL's own overrides are left to OpenSSL.
    monkeypatch.setenv("SSL_CERT_FILE", str(bundles[2]))
    assert _ffi.system_ca_file() is None


def test_a_wheels_openssl_looks_for_the_trust_store_where_debian_keeps_it() -> None:
    if not (Path(_ffi.lib._name).resolve().parent.parent / "swiftpush.libs").is_dir():
        pytest.skip("the library loaded is not a wheel's (no swiftpush.libs/ beside its package)")
    assert _ffi._vendored_openssl_paths() == ("/usr/lib/ssl/cert.pem", "/usr/lib/ssl/certs")
