"""The payload builder and the topic helper, through the library."""

from __future__ import annotations

import json

import pytest

import swiftpush
from swiftpush import InvalidNotification, Payload, PayloadField, PushType, Status

from conftest import TOKEN


def test_a_payload_builds_aps_first_then_custom_keys() -> None:
    payload = Payload(alert_title="Hello", alert_body='from "swiftpush" ☃', badge=3, sound="default")
    payload.set(PayloadField.ALERT_LOC_KEY, "GREETING").set("alert_loc_args", ["Ada", "Bob"])
    payload.custom("order", {"id": 42, "items": [1, 2]})
    text = payload.build()
    assert list(json.loads(text)) == ["aps", "order"]
    assert json.loads(text) == {
        "aps": {"alert": {"title": "Hello", "body": 'from "swiftpush" ☃', "loc-key": "GREETING",
                          "loc-args": ["Ada", "Bob"]}, "badge": 3, "sound": "default"},
        "order": {"id": 42, "items": [1, 2]},
    }
    payload.set("badge", None)
    assert "badge" not in json.loads(payload.build())["aps"]


def test_a_live_activity_payload_carries_raw_content_state() -> None:
    payload = Payload(event="update", timestamp=1700000000, content_state={"score": "2-1"}, relevance_score=0.5)
    aps = json.loads(payload.build())["aps"]
    assert aps == {"event": "update", "timestamp": 1700000000, "content-state": {"score": "2-1"}, "relevance-score": 0.5}


def test_invalid_payload_fields_raise_with_the_librarys_message() -> None:
    with pytest.raises(InvalidNotification, match="start, update or end"):
        Payload(event="bogus")
    with pytest.raises(InvalidNotification) as raised:
        Payload(alert_body="x" * 5000).build()
    assert raised.value.code == Status.PAYLOAD_TOO_LARGE
    assert len(Payload(alert_body="x" * 5000, push_type=PushType.VOIP).build()) > 5000
    with pytest.raises(TypeError, match="no_such_field"):
        Payload(no_such_field=1)


def test_topic_for_adds_the_push_types_suffix() -> None:
    assert swiftpush.topic_for("com.example.app") == "com.example.app"
    assert swiftpush.topic_for("com.example.app", PushType.VOIP) == "com.example.app.voip"
    assert swiftpush.topic_for("com.example.app", "liveactivity") == "com.example.app.push-type.liveactivity"
    with pytest.raises(InvalidNotification):
        swiftpush.topic_for("com.example.app", PushType.MDM)


def test_a_built_payload_is_sent_and_stats_count_it(make_client) -> None:
    client = make_client()
    tag = client.send(TOKEN, Payload(alert_title="Hi", badge=1))
    [result] = client.poll(1, 20)
    assert result.tag == tag and result.accepted
    stats = client.stats()
    assert stats.accepted == 1 and stats.sent >= 1 and stats.connections_started >= 1
    assert all(isinstance(c, swiftpush.ConnectionStats) for c in stats.connections)
