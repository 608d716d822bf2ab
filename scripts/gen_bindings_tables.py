#!/usr/bin/env python3
"""The Python and Go enums of the bindings, generated with the C and Swift ones.

Called by scripts/gen_tables.py (its `outputs()` hook); not meant to be run alone. Sources:
  Tables/reasons.tsv, Tables/status.tsv, Tables/push_types.tsv   (passed in by gen_tables.py)
  Tables/options.tsv    the options (kind, range, default), also passed in by gen_tables.py
  Include/swiftpush.h   the enums that live in the C ABI rather than in a table: push_outcome,
                        push_notification_flags, and push_environment, push_connection_state and
                        push_payload_field (with its setter from the group comments) when the
                        header has them.
Outputs:
  Bindings/python/swiftpush/_tables.py
  Bindings/go/tables.go
Each is written only when its binding's directory exists.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC_HEADER = os.path.join(ROOT, "Include", "swiftpush.h")

# apns-priority has no table of its own: Apple defines three values (and 0 asks the library for
# the push type's default).
PRIORITIES = [
    ("IMMEDIATE", 10, "Deliver at once (alerts, sounds, badges)."),
    ("CONSERVE_POWER", 5, "Deliver when the device's power state allows (required for background)."),
    ("LOW", 1, "Prioritize the device's power over timely delivery; may be dropped."),
]

GO_INITIALISMS = {"VOIP": "VoIP", "MDM": "MDM", "ID": "ID", "TLS": "TLS", "APNS": "APNs", "CA": "CA", "OK": "OK", "JSON": "JSON",
                  "HTTP": "HTTP", "P12": "P12", "PEM": "PEM", "URL": "URL"}


# ---------------------------------------------------------------------------------------------
# Reading the C enums of the public header


def _clean_doc(text):
    text = re.sub(r"\s*\n\s*\*?\s*", " ", text.strip())
    return text.strip()


def c_enum(header, name):
    """[(C name, value, doc)] of `enum name { ... }`, or None when the header has no such enum."""
    m = re.search(r"enum\s+" + re.escape(name) + r"\s*\{(.*?)\};", header, re.S)
    if not m:
        return None
    items, pending = [], None
    for tok in re.finditer(r"/\*\*(<?)(.*?)\*/|(PUSH_\w+)\s*=\s*(-?\w+)", m.group(1), re.S):
        if tok.group(3):
            items.append([tok.group(3), int(tok.group(4), 0), pending or ""])
            pending = None
        elif tok.group(1) == "<" and items:
            items[-1][2] = _clean_doc(tok.group(2))
        else:
            pending = _clean_doc(tok.group(2))
    return [tuple(i) for i in items]


def c_enum_kinds(header, name):
    """[(C name, value, doc, kind)] of an enum whose members are grouped under plain /* ... */
    comments naming their setter ("push_payload_set_string" -> "string", "push_payload_add_loc_arg"
    -> "loc_arg"), or None when the header has no such enum."""
    m = re.search(r"enum\s+" + re.escape(name) + r"\s*\{(.*?)\};", header, re.S)
    if not m:
        return None
    items, kind = [], None
    for tok in re.finditer(r"/\*\*<(.*?)\*/|/\*(?!\*)(.*?)\*/|(PUSH_\w+)\s*=\s*(-?\w+)", m.group(1), re.S):
        if tok.group(3):
            if kind is None:
                raise SystemExit(f"gen_bindings_tables: {tok.group(3)} has no setter group comment")
            items.append([tok.group(3), int(tok.group(4), 0), "", kind])
        elif tok.group(2) is not None:
            setter = re.search(r"push_\w+?_(set_|add_)(\w+)", tok.group(2))
            kind = setter.group(2) if setter else None
        elif items:
            items[-1][2] = _clean_doc(tok.group(1))
    return [tuple(i) for i in items]


def strip_prefix(cname, prefix):
    assert cname.startswith(prefix), (cname, prefix)
    return cname[len(prefix):]


# The options, from Tables/options.tsv through gen_tables.py's `outputs()`: (name, value, doc,
# kind, (lo, hi) or None, default or None).
OPTIONS = []


def abi_enums():
    with open(PUBLIC_HEADER, encoding="utf-8") as f:
        header = f.read()
    out = {
        "outcome": [(strip_prefix(n, "PUSH_OUTCOME_"), v, d) for n, v, d in c_enum(header, "push_outcome")],
        "option": [(n, v, d) for n, v, d, *_ in OPTIONS],
        "flags": [(strip_prefix(n, "PUSH_NOTIFICATION_"), v, d) for n, v, d in c_enum(header, "push_notification_flags")],
    }
    env = c_enum(header, "push_environment")
    out["environment"] = [(strip_prefix(n, "PUSH_ENV_"), v, d) for n, v, d in env] if env else []
    fields = c_enum_kinds(header, "push_payload_field")
    out["payload_field"] = [(strip_prefix(n, "PUSH_PAYLOAD_"), v, d, k) for n, v, d, k in fields] if fields else []
    state = c_enum(header, "push_connection_state")
    out["connection_state"] = [(strip_prefix(n, "PUSH_CONNECTION_"), v, d) for n, v, d in state] if state else []
    return out


def status_name(name):
    """E_QUEUE_FULL -> QUEUE_FULL (OK stays OK)."""
    return name[2:] if name.startswith("E_") else name


def is_validation(name):
    """A status that means "this notification is invalid" (refused at send, never retried)."""
    return (name.startswith("E_BAD_") and name != "E_BAD_OPTION") or name == "E_PAYLOAD_TOO_LARGE"


# ---------------------------------------------------------------------------------------------
# Python


def py_str(s):
    return repr(s)


def info_properties(o, table, props):
    """One read-only property per (name, type, doc), returning that column of `table`[self]."""
    for idx, (prop, typ, doc) in enumerate(props):
        o.append("    @property")
        o.append(f"    def {prop}(self) -> {typ}:")
        o.append(f'        """{doc}"""')
        o.append(f"        return {table}[self][{idx}]")
        o.append("")


def python_tables(reasons, status, push_types, upper_snake, header):
    abi = abi_enums()
    o = [f'"""Enums of the C ABI ({header}).', "",
         "Sources: Tables/*.tsv and Include/swiftpush.h, through scripts/gen_bindings_tables.py.",
         '"""', "", "from __future__ import annotations", "", "import enum",
         "from typing import Dict, FrozenSet, Optional, Tuple, Union", "", ""]

    # Status
    o.append("class Status(enum.IntEnum):")
    o.append('    """A status code returned by the C functions (PUSH_OK, PUSH_E_*)."""')
    o.append("")
    for name, value, msg in status:
        o.append(f"    #: {msg}")
        o.append(f"    {status_name(name)} = {value}")
    o.append("")
    o.append("    @property")
    o.append("    def message(self) -> str:")
    o.append('        """The static message push_strerror() returns for this code."""')
    o.append("        return _STATUS_MESSAGES[self]")
    o.append("")
    o.append("    @property")
    o.append("    def is_validation(self) -> bool:")
    o.append('        """True for the codes that reject one notification as invalid."""')
    o.append("        return self in VALIDATION_STATUSES")
    o.append("")
    o.append("")
    o.append("_STATUS_MESSAGES: Dict[int, str] = {")
    for name, value, msg in status:
        o.append(f"    {value}: {py_str(msg)},")
    o.append("}")
    o.append("")
    o.append("#: The codes with which a send refuses an invalid notification.")
    o.append("VALIDATION_STATUSES: FrozenSet[Status] = frozenset({")
    for name, value, msg in status:
        if is_validation(name):
            o.append(f"    Status.{status_name(name)},")
    o.append("})")
    o.append("")
    o.append("")

    # Reason
    o.append("class Reason(enum.IntEnum):")
    o.append('    """Why a notification ended as it did (push_result.reason).')
    o.append("")
    o.append("    Each member carries its APNs spelling (`text`), HTTP status, retry class and")
    o.append("    description. UNKNOWN: APNs sent a reason that is not in the table (see Result.reason_text).")
    o.append('    """')
    o.append("")
    o.append("    #: Accepted: no reason.")
    o.append("    NONE = 0")
    for i, (name, http, retry, desc) in enumerate(reasons, start=1):
        o.append(f"    #: {http} ({retry}): {desc}")
        o.append(f"    {upper_snake(name)} = {i}")
    o.append("    #: A reason APNs sent that is not in the table.")
    o.append("    UNKNOWN = 1000")
    o.append("")
    info_properties(o, "_REASON_INFO", [
        ("text", "str", 'The reason as APNs spells it ("BadDeviceToken"); "" for NONE.'),
        ("http_status", "int", "The HTTP status APNs answers with (200 for NONE, 0 when decided locally)."),
        ("retry_class", "str", "never, later, backoff, token, connection, unknown or local (see Tables/reasons.tsv)."),
        ("description", "str", "One sentence describing the reason.")])
    o.append("    @classmethod")
    o.append('    def from_text(cls, text: str) -> "Reason":')
    o.append('        """The member for an APNs reason text; UNKNOWN when the text is not in the table."""')
    o.append("        return _REASON_BY_TEXT.get(text, cls.UNKNOWN)")
    o.append("")
    o.append("")
    o.append("_REASON_INFO: Dict[int, Tuple[str, int, str, str]] = {")
    o.append('    0: ("", 200, "never", "Accepted."),')
    for i, (name, http, retry, desc) in enumerate(reasons, start=1):
        o.append(f"    {i}: ({py_str(name)}, {http}, {py_str(retry)}, {py_str(desc)}),")
    o.append('    1000: ("Unknown", 0, "never", "A reason that is not in the table."),')
    o.append("}")
    o.append("_REASON_BY_TEXT: Dict[str, Reason] = {info[0]: Reason(value) for value, info in _REASON_INFO.items() if value}")
    o.append("")
    o.append("")

    # PushType
    o.append("class PushType(enum.IntEnum):")
    o.append('    """The APNs push types (apns-push-type), with their rules."""')
    o.append("")
    for i, (name, hdr, suffix, prio, limit) in enumerate(push_types):
        sfx = "" if suffix == "-" else f", topic suffix {suffix}"
        o.append(f"    #: {hdr}{sfx}, default priority {prio}, payload <= {limit} bytes")
        o.append(f"    {name} = {i}")
    o.append("")
    info_properties(o, "_PUSH_TYPE_INFO", [
        ("header", "str", "The apns-push-type header value."),
        ("topic_suffix", "str", 'The suffix the topic must end with ("" when any topic goes).'),
        ("default_priority", "int", "The priority used when none is given."),
        ("payload_limit", "int", "The largest payload APNs accepts, in bytes.")])
    o.append("    @classmethod")
    o.append('    def from_header(cls, value: str) -> "PushType":')
    o.append('        """The member for an apns-push-type value (ValueError when there is none)."""')
    o.append("        for member, info in _PUSH_TYPE_INFO.items():")
    o.append("            if info[0] == value:")
    o.append("                return cls(member)")
    o.append('        raise ValueError(f"unknown push type {value!r}")')
    o.append("")
    o.append("")
    o.append("_PUSH_TYPE_INFO: Dict[int, Tuple[str, str, int, int]] = {")
    for i, (name, hdr, suffix, prio, limit) in enumerate(push_types):
        o.append(f"    {i}: ({py_str(hdr)}, {py_str('' if suffix == '-' else suffix)}, {prio}, {limit}),")
    o.append("}")
    o.append("")
    o.append("")

    # Priority
    o.append("class Priority(enum.IntEnum):")
    o.append('    """apns-priority values (None in send() means the push type\'s default)."""')
    o.append("")
    for name, value, doc in PRIORITIES:
        o.append(f"    #: {doc}")
        o.append(f"    {name} = {value}")
    o.append("")
    o.append("")

    def simple_enum(cls, doc, items):
        o.append(f"class {cls}(enum.IntEnum):")
        o.append(f'    """{doc}"""')
        o.append("")
        for name, value, d in items:
            if d:
                o.append(f"    #: {d}")
            o.append(f"    {name} = {value}")
        o.append("")
        o.append("")

    simple_enum("Outcome", "How a notification ended (push_result.outcome): exactly one result per notification.",
                abi["outcome"])

    # Option
    o.append("class Option(enum.IntEnum):")
    o.append('    """Configuration options (push_config_set_int / push_config_set_string).')
    o.append("")
    o.append("    Client() takes each as a keyword argument named after it in lower case (host=, port=, ...).")
    o.append('    """')
    o.append("")
    for name, value, doc in abi["option"]:
        o.append(f"    #: {doc}")
        o.append(f"    {name} = {value}")
    o.append("")
    info_properties(o, "_OPTION_INFO", [
        ("kind", "str", '"int" or "string": which setter takes it.'),
        ("range", "Optional[Tuple[int, int]]", "(lowest, highest) value an int option accepts; None for a string option."),
        ("default", "Optional[Union[int, str]]", "The library's default (None: none, or computed).")])
    o.append("")
    o.append("_OPTION_INFO: Dict[int, Tuple[str, Optional[Tuple[int, int]], Optional[Union[int, str]]]] = {")
    for name, value, doc, kind, rng, default in OPTIONS:
        o.append(f"    {value}: ({py_str(kind)}, {rng!r}, {default!r}),")
    o.append("}")
    o.append("")
    o.append("")
    if abi["environment"]:
        simple_enum("Environment", "Values of Option.ENVIRONMENT.", abi["environment"])
    if abi["connection_state"]:
        simple_enum("ConnectionState", "The state of one connection of the pool.", abi["connection_state"])

    if abi["payload_field"]:
        o.append("class PayloadField(enum.IntEnum):")
        o.append('    """Fields of the payload builder (Payload); `kind` names the setter that takes each."""')
        o.append("")
        for name, value, doc, kind in abi["payload_field"]:
            o.append(f"    #: {kind}: {doc}")
            o.append(f"    {name} = {value}")
        o.append("")
        o.append("    @property")
        o.append("    def kind(self) -> str:")
        o.append('        """string, loc_arg, int, double or raw (push_payload_set_<kind> / add_loc_arg)."""')
        o.append("        return _PAYLOAD_FIELD_KIND[self]")
        o.append("")
        o.append("")
        o.append("_PAYLOAD_FIELD_KIND: Dict[int, str] = {")
        for name, value, doc, kind in abi["payload_field"]:
            o.append(f"    {value}: {py_str(kind)},")
        o.append("}")
        o.append("")
        o.append("")
    o.append("# push_notification.flags")
    for name, value, doc in abi["flags"]:
        o.append(f"NOTIFICATION_{name} = {value}  # {doc}")
    o.append("")
    o.append("REASON_TABLE_COUNT = " + str(len(reasons)))
    o.append("PUSH_TYPE_COUNT = " + str(len(push_types)))
    return "\n".join(o) + "\n"


# ---------------------------------------------------------------------------------------------
# Go


# Push type names that are several words run together in the table (new ones fall back to
# capitalization: PUSH_TYPE_FOO -> PushTypeFoo).
GO_PUSH_TYPE_WORDS = {"LIVEACTIVITY": "LiveActivity", "PUSHTOTALK": "PushToTalk", "FILEPROVIDER": "FileProvider"}


def go_camel_from_snake(snake):
    """QUEUE_FULL -> QueueFull, BAD_APNS_ID -> BadAPNsID, CA_FILE -> CAFile."""
    return "".join(GO_INITIALISMS.get(p, p.capitalize()) for p in snake.split("_") if p)


def go_camel_from_camel(camel):
    """BadCollapseId -> BadCollapseID (Go spells initialisms in one case)."""
    return re.sub(r"Id(?=[A-Z]|$)", "ID", camel)


def go_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def go_tables(reasons, status, push_types, upper_snake, header):
    abi = abi_enums()
    o = ["// Code generated by scripts/gen_tables.py (scripts/gen_bindings_tables.py) from Tables/ and Include/swiftpush.h. DO NOT EDIT.",
         "", "package swiftpush", ""]

    # Status
    o.append("// Status is a status code of the C functions (PUSH_OK, PUSH_E_*). Every non-OK Status is an")
    o.append("// error: compare with errors.Is(err, swiftpush.ErrQueueFull) and friends.")
    o.append("type Status int32")
    o.append("")
    o.append("// Status codes (Tables/status.tsv).")
    o.append("const (")
    for name, value, msg in status:
        o.append(f"\t// Status{go_camel_from_snake(status_name(name))}: {msg}.")
        o.append(f"\tStatus{go_camel_from_snake(status_name(name))} Status = {value}")
    o.append(")")
    o.append("")
    o.append("// Sentinel errors, one per failure status: errors.Is(err, ErrClosed) is true for an *Error")
    o.append("// carrying that code.")
    o.append("const (")
    for name, value, msg in status:
        if name == "OK":
            continue
        g = go_camel_from_snake(status_name(name))
        o.append(f"\t// Err{g}: {msg}.")
        o.append(f"\tErr{g} = Status{g}")
    o.append(")")
    o.append("")
    o.append("// Message returns the static message push_strerror gives for s.")
    o.append("func (s Status) Message() string {")
    o.append("\tswitch s {")
    for name, value, msg in status:
        o.append(f"\tcase Status{go_camel_from_snake(status_name(name))}:")
        o.append(f"\t\treturn {go_str(msg)}")
    o.append("\t}")
    o.append('\treturn "unknown status code"')
    o.append("}")
    o.append("")
    o.append("// IsValidation reports whether s rejects one notification as invalid (ErrInvalidNotification).")
    o.append("func (s Status) IsValidation() bool {")
    o.append("\tswitch s {")
    o.append("\tcase " + ", ".join(f"Status{go_camel_from_snake(status_name(n))}" for n, _, _ in status if is_validation(n)) + ":")
    o.append("\t\treturn true")
    o.append("\t}")
    o.append("\treturn false")
    o.append("}")
    o.append("")

    # Reason
    o.append("// Reason says why a notification ended as it did (Result.Reason). String returns the APNs")
    o.append("// spelling (\"BadDeviceToken\"); ReasonUnknown means APNs sent a reason not in the table")
    o.append("// (Result.ReasonText keeps it).")
    o.append("type Reason int32")
    o.append("")
    o.append("// Reasons (Tables/reasons.tsv).")
    o.append("const (")
    o.append("\t// ReasonNone: accepted, no reason.")
    o.append("\tReasonNone Reason = 0")
    for i, (name, http, retry, desc) in enumerate(reasons, start=1):
        o.append(f"\t// Reason{go_camel_from_camel(name)}: {http} ({retry}): {desc}")
        o.append(f"\tReason{go_camel_from_camel(name)} Reason = {i}")
    o.append("\t// ReasonUnknown: a reason APNs sent that is not in the table.")
    o.append("\tReasonUnknown Reason = 1000")
    o.append(")")
    o.append("")
    o.append("type reasonInfo struct {")
    o.append("\ttext        string")
    o.append("\thttpStatus  int")
    o.append("\tretryClass  string")
    o.append("\tdescription string")
    o.append("}")
    o.append("")
    o.append("var reasonTable = [...]reasonInfo{")
    o.append('\t{"", 200, "never", "Accepted."},')
    for name, http, retry, desc in reasons:
        o.append(f"\t{{{go_str(name)}, {http}, {go_str(retry)}, {go_str(desc)}}},")
    o.append("}")
    o.append("")
    o.append('var reasonUnknown = reasonInfo{"Unknown", 0, "never", "A reason that is not in the table."}')
    o.append("")
    o.append("func (r Reason) info() reasonInfo {")
    o.append("\tif r >= 0 && int(r) < len(reasonTable) {")
    o.append("\t\treturn reasonTable[r]")
    o.append("\t}")
    o.append("\treturn reasonUnknown")
    o.append("}")
    o.append("")
    o.append("// String returns the reason as APNs spells it (\"\" for ReasonNone, \"Unknown\" outside the table).")
    o.append("func (r Reason) String() string { return r.info().text }")
    o.append("")
    o.append("// HTTPStatus returns the status APNs answers with (200 for ReasonNone, 0 when decided locally).")
    o.append("func (r Reason) HTTPStatus() int { return r.info().httpStatus }")
    o.append("")
    o.append("// RetryClass returns never, later, backoff, token, connection, unknown or local (Tables/reasons.tsv).")
    o.append("func (r Reason) RetryClass() string { return r.info().retryClass }")
    o.append("")
    o.append("// Description returns one sentence describing the reason.")
    o.append("func (r Reason) Description() string { return r.info().description }")
    o.append("")
    o.append("// ReasonFromText returns the Reason for an APNs reason text, ReasonUnknown when not in the table.")
    o.append("func ReasonFromText(text string) Reason {")
    o.append("\tfor i := 1; i < len(reasonTable); i++ {")
    o.append("\t\tif reasonTable[i].text == text {")
    o.append("\t\t\treturn Reason(i)")
    o.append("\t\t}")
    o.append("\t}")
    o.append("\treturn ReasonUnknown")
    o.append("}")
    o.append("")

    # PushType
    o.append("// PushType is an APNs push type (apns-push-type). String returns the header value.")
    o.append("type PushType int32")
    o.append("")
    o.append("// Push types (Tables/push_types.tsv).")
    o.append("const (")
    for i, (name, hdr, suffix, prio, limit) in enumerate(push_types):
        sfx = "" if suffix == "-" else f", topic suffix {suffix}"
        g = GO_PUSH_TYPE_WORDS.get(name) or go_camel_from_snake(name)
        o.append(f"\t// PushType{g}: {hdr}{sfx}, default priority {prio}, payload <= {limit} bytes.")
        o.append(f"\tPushType{g} PushType = {i}")
    o.append(")")
    o.append("")
    o.append("type pushTypeInfo struct {")
    o.append("\theader          string")
    o.append("\ttopicSuffix     string")
    o.append("\tdefaultPriority Priority")
    o.append("\tpayloadLimit    int")
    o.append("}")
    o.append("")
    o.append("var pushTypeTable = [...]pushTypeInfo{")
    for name, hdr, suffix, prio, limit in push_types:
        o.append(f"\t{{{go_str(hdr)}, {go_str('' if suffix == '-' else suffix)}, {prio}, {limit}}},")
    o.append("}")
    o.append("")
    o.append("func (t PushType) info() pushTypeInfo {")
    o.append("\tif t >= 0 && int(t) < len(pushTypeTable) {")
    o.append("\t\treturn pushTypeTable[t]")
    o.append("\t}")
    o.append("\treturn pushTypeInfo{}")
    o.append("}")
    o.append("")
    o.append("// String returns the apns-push-type header value (\"\" for a value outside the table).")
    o.append("func (t PushType) String() string { return t.info().header }")
    o.append("")
    o.append("// TopicSuffix returns the suffix the topic must end with (\"\" when any topic goes).")
    o.append("func (t PushType) TopicSuffix() string { return t.info().topicSuffix }")
    o.append("")
    o.append("// DefaultPriority returns the priority used when a notification gives none.")
    o.append("func (t PushType) DefaultPriority() Priority { return t.info().defaultPriority }")
    o.append("")
    o.append("// PayloadLimit returns the largest payload APNs accepts for t, in bytes.")
    o.append("func (t PushType) PayloadLimit() int { return t.info().payloadLimit }")
    o.append("")

    # Priority
    o.append("// Priority is an apns-priority value; PriorityDefault asks for the push type's default.")
    o.append("type Priority int32")
    o.append("")
    o.append("// Priorities.")
    o.append("const (")
    o.append("\t// PriorityDefault: the push type's default priority.")
    o.append("\tPriorityDefault Priority = 0")
    for name, value, doc in PRIORITIES:
        o.append(f"\t// Priority{go_camel_from_snake(name)}: {doc}")
        o.append(f"\tPriority{go_camel_from_snake(name)} Priority = {value}")
    o.append(")")
    o.append("")

    def simple(typ, doc, prefix, items, stringer=True):
        o.append(f"// {typ} {doc}")
        o.append(f"type {typ} int32")
        o.append("")
        o.append(f"// {typ} values (Include/swiftpush.h).")
        o.append("const (")
        for name, value, d in items:
            o.append(f"\t// {prefix}{go_camel_from_snake(name)}: {d}")
            o.append(f"\t{prefix}{go_camel_from_snake(name)} {typ} = {value}")
        o.append(")")
        o.append("")
        if stringer:
            o.append(f"// String returns the C name of the value without its prefix (\"{items[0][0]}\").")
            o.append(f"func (v {typ}) String() string {{")
            o.append("\tswitch v {")
            for name, value, d in items:
                o.append(f"\tcase {prefix}{go_camel_from_snake(name)}:")
                o.append(f"\t\treturn {go_str(name)}")
            o.append("\t}")
            o.append('\treturn "invalid"')
            o.append("}")
            o.append("")

    simple("Outcome", "says how a notification ended: exactly one Result per notification sent.", "Outcome",
           abi["outcome"])
    simple("Option", "is a configuration option of the C ABI (push_config_set_int / _string); Config.Options takes any of them.",
           "Option", abi["option"])
    o.append("// IsString reports whether the option takes a string (otherwise an integer).")
    o.append("func (v Option) IsString() bool {")
    o.append("\tswitch v {")
    strs = [f"Option{go_camel_from_snake(n)}" for n, _, _, kind, *_ in OPTIONS if kind == "string"]
    o.append("\tcase " + ", ".join(strs) + ":")
    o.append("\t\treturn true")
    o.append("\t}")
    o.append("\treturn false")
    o.append("}")
    o.append("")
    o.append("// allOptions lists every Option, in the table's order (Tables/options.tsv).")
    o.append("var allOptions = []Option{" + ", ".join(f"Option{go_camel_from_snake(n)}" for n, *_ in OPTIONS) + "}")
    o.append("")
    o.append("// Range returns the lowest and highest value an integer option accepts (ok is false for a")
    o.append("// string option, or a value that is not an option).")
    o.append("func (v Option) Range() (lowest, highest int64, ok bool) {")
    o.append("\tswitch v {")
    for n, _, _, kind, rng, _ in OPTIONS:
        if rng is not None:
            o.append(f"\tcase Option{go_camel_from_snake(n)}:")
            o.append(f"\t\treturn {rng[0]}, {rng[1]}, true")
    o.append("\t}")
    o.append("\treturn 0, 0, false")
    o.append("}")
    o.append("")
    if abi["environment"]:
        simple("Environment", "is a value of OptionEnvironment.", "Environment", abi["environment"])
    if abi["connection_state"]:
        simple("ConnectionState", "is the state of one connection of the pool.", "Connection", abi["connection_state"])
    if abi["payload_field"]:
        o.append("// PayloadField is a field of the payload builder (Payload.Set).")
        o.append("type PayloadField int32")
        o.append("")
        o.append("// Payload fields (Include/swiftpush.h), grouped by the setter that takes them.")
        o.append("const (")
        for name, value, doc, kind in abi["payload_field"]:
            o.append(f"\t// Payload{go_camel_from_snake(name)} ({kind}): {doc}")
            o.append(f"\tPayload{go_camel_from_snake(name)} PayloadField = {value}")
        o.append(")")
        o.append("")
        o.append("// kind names the setter of a field: string, loc_arg, int, double or raw (\"\" for none).")
        o.append("func (f PayloadField) kind() string {")
        o.append("\tswitch f {")
        kinds = {}
        for name, value, doc, kind in abi["payload_field"]:
            kinds.setdefault(kind, []).append(f"Payload{go_camel_from_snake(name)}")
        for kind, names in kinds.items():
            o.append("\tcase " + ", ".join(names) + ":")
            o.append(f"\t\treturn {go_str(kind)}")
        o.append("\t}")
        o.append('\treturn ""')
        o.append("}")
        o.append("")
    o.append("// push_notification.flags")
    o.append("const (")
    for name, value, doc in abi["flags"]:
        o.append(f"\t// {doc}")
        o.append(f"\tnotification{go_camel_from_snake(name)} = {value}")
    o.append(")")
    return "\n".join(o) + "\n"


def outputs(reasons, status, push_types, upper_snake, header, options):
    OPTIONS[:] = options
    out = {}
    if os.path.isdir(os.path.join(ROOT, "Bindings", "python", "swiftpush")):
        out["Bindings/python/swiftpush/_tables.py"] = python_tables(reasons, status, push_types, upper_snake, header)
    if os.path.isdir(os.path.join(ROOT, "Bindings", "go")):
        out["Bindings/go/tables.go"] = go_tables(reasons, status, push_types, upper_snake, header)
    return out
