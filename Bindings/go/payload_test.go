package swiftpush

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAPayloadBuildsAPSFirstThenCustomKeys(t *testing.T) {
	p := NewPayload()
	defer p.Free()
	for _, step := range []error{
		p.Set(PayloadAlertTitle, "Hello"), p.Set(PayloadAlertBody, `from "swiftpush" ☃`), p.Set(PayloadBadge, 3),
		p.Set(PayloadAlertLocKey, "GREETING"), p.Set(PayloadAlertLocArgs, []string{"Ada", "Bob"}),
		p.Set(PayloadContentState, map[string]string{"score": "2-1"}), p.Set(PayloadRelevanceScore, 0.5),
		p.SetCustom("order", json.RawMessage(`{"id":42}`)),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	body, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(body), `{"aps":{`) || !strings.HasSuffix(string(body), `"order":{"id":42}}`) {
		t.Errorf("order of keys: %s", body)
	}
	var got map[string]interface{}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"aps": map[string]interface{}{
			"alert": map[string]interface{}{"title": "Hello", "body": `from "swiftpush" ☃`, "loc-key": "GREETING",
				"loc-args": []interface{}{"Ada", "Bob"}},
			"badge": 3.0, "content-state": map[string]interface{}{"score": "2-1"}, "relevance-score": 0.5,
		},
		"order": map[string]interface{}{"id": 42.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("payload %s", body)
	}
}

func TestInvalidPayloadFieldsAreRefusedWithTheLibrarysMessage(t *testing.T) {
	p := NewPayload()
	if err := p.Set(PayloadEvent, "bogus"); !errors.Is(err, ErrBadPayload) || !strings.Contains(err.Error(), "start, update or end") {
		t.Errorf("event bogus: %v", err)
	}
	if err := p.Set(PayloadBadge, "three"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("badge as a string: %v", err)
	}
	_ = p.Set(PayloadAlertBody, strings.Repeat("x", 5000))
	if _, err := p.Build(); !errors.Is(err, ErrPayloadTooLarge) {
		t.Errorf("5000-byte alert: %v", err)
	}
	_ = p.Set(PayloadPushType, PushTypeVoIP)
	if body, err := p.Build(); err != nil || len(body) < 5000 {
		t.Errorf("5000-byte voip: %d bytes, %v", len(body), err)
	}
	p.Free()
	p.Free()
	if err := p.Set(PayloadBadge, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("after Free: %v", err)
	}
}

func TestTopicForAddsThePushTypesSuffix(t *testing.T) {
	for typ, want := range map[PushType]string{PushTypeAlert: "com.example.app", PushTypeVoIP: "com.example.app.voip",
		PushTypeLiveActivity: "com.example.app.push-type.liveactivity"} {
		if got, err := TopicFor("com.example.app", typ); got != want || err != nil {
			t.Errorf("TopicFor(%v) = %q, %v; want %q", typ, got, err, want)
		}
	}
	if _, err := TopicFor("com.example.app", PushTypeMDM); !errors.Is(err, ErrBadTopic) {
		t.Errorf("mdm: %v", err)
	}
}

func TestABuiltPayloadIsSentAndAccepted(t *testing.T) {
	c := open(t, testConfig(t))
	p := NewPayload()
	defer p.Free()
	_ = p.Set(PayloadAlertTitle, "Hi")
	body, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(Notification{Token: testToken, Payload: body, Tag: 9}); err != nil {
		t.Fatal(err)
	}
	if r := collect(t, c, 1)[0]; !r.Accepted() || r.Tag != 9 {
		t.Errorf("result %+v", r)
	}
}
