"""The package's version is the release's (the file VERSION), and the library it loads agrees."""

from __future__ import annotations

from pathlib import Path

import swiftpush
from swiftpush import _ffi

VERSION = (Path(__file__).resolve().parents[3] / "VERSION").read_text(encoding="utf-8").strip()


def test_dunder_version_is_the_release_version() -> None:
    assert swiftpush.__version__ == VERSION


def test_the_loaded_library_is_of_the_same_release() -> None:
    assert swiftpush.library_version() == VERSION


def test_the_library_is_looked_for_by_the_soname_of_the_releases_major_version() -> None:
    # libswiftpush.so.<major>: an install's runtime name, which the loader finds without the
    # development link libswiftpush.so, and never a library of another ABI (docs/abi.md).
    assert _ffi.LIBRARY_NAME == "libswiftpush.so." + VERSION.split(".")[0]
