"""The binding's view of the C ABI agrees with the library and its C sources."""

from __future__ import annotations

import ctypes
import re

import pytest

import swiftpush
from swiftpush import _ffi
from swiftpush._tables import Option, Reason, Status

from conftest import ROOT

MIRRORS = {"push_notification": _ffi.PushNotification, "push_result": _ffi.PushResult, "push_error": _ffi.PushError,
           "push_stats": _ffi.PushStats, "push_connection_stats": _ffi.PushConnectionStats,
           "push_channel_result": _ffi.PushChannelResult, "push_channel_ids": _ffi.PushChannelIds}


def test_records_have_the_sizes_and_offsets_abi_layout_c_asserts() -> None:
    text = (ROOT / "Sources" / "CSwiftPushABI" / "abi_layout.c").read_text()
    checked = 0
    for struct_name, size in re.findall(r"sizeof\((\w+)\)\s*==\s*(\d+)", text):
        if struct_name in MIRRORS:
            assert ctypes.sizeof(MIRRORS[struct_name]) == int(size), struct_name
            checked += 1
    for struct_name, field, offset in re.findall(r"offsetof\((\w+),\s*(\w+)\)\s*==\s*(\d+)", text):
        if struct_name in MIRRORS:
            assert getattr(MIRRORS[struct_name], field).offset == int(offset), f"{struct_name}.{field}"
            checked += 1
    assert checked >= 11


def test_generated_tables_match_the_library() -> None:
    for reason in Reason:
        assert _ffi.lib.push_reason_name(reason).decode() == reason.text, reason
    for status in Status:
        assert _ffi.strerror(status) == status.message, status


def test_option_kinds_and_ranges_generated_from_the_table_match_the_library() -> None:
    # Option.kind and Option.range come from Tables/options.tsv; the library checks the same
    # table: each int option takes its bounds and refuses one past them, and each option is
    # refused by the other kind's setter.
    config = _ffi.lib.push_config_new()
    err = _ffi.PushError()
    try:
        for option in Option:
            if option.kind == "int":
                low, high = option.range
                for value in (low, high):
                    _ffi.lib.push_config_set_int(config, option, value, err)
                for value in (low - 1, high + 1):
                    with pytest.raises(swiftpush.ConfigError, match=str(value)):
                        _ffi.lib.push_config_set_int(config, option, value, err)
                with pytest.raises(swiftpush.ConfigError, match="not a string option"):
                    _ffi.lib.push_config_set_string(config, option, b"x", 1, err)
            else:
                assert option.kind == "string" and option.range is None, option
                with pytest.raises(swiftpush.ConfigError, match="not an integer option"):
                    _ffi.lib.push_config_set_int(config, option, 1, err)
    finally:
        _ffi.lib.push_config_free(config)
    assert Option.PORT.range == (1, 65535) and Option.PORT.default == 443
    assert Option.HOST.default == "api.push.apple.com"


def test_every_declared_function_is_exported_by_the_library() -> None:
    missing = [name for name in _ffi.FUNCTIONS if not hasattr(_ffi.lib, name)]
    assert missing == []


def test_version_is_the_headers() -> None:
    header = (ROOT / "Include" / "swiftpush.h").read_text()
    assert f'#define PUSH_VERSION_STRING "{swiftpush.library_version()}"' in header
