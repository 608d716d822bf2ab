package swiftpush

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// broadcastMock starts a mock of its own with a channel management listener (at most 3
// channels per app; com.example.disabled has no broadcast push) and returns a configuration
// for it and the management port. The mock is stopped when the test ends.
func broadcastMock(t *testing.T) (Config, int) {
	t.Helper()
	cfg := testConfig(t)
	cli := os.Getenv("SWIFTPUSH_CLI")
	if cli == "" {
		t.Skip("SWIFTPUSH_CLI is not set")
	}
	dir := t.TempDir()
	m, port, err := startMock(cli, pkiDir, dir, "broadcast", "server", "--channel-port-file",
		filepath.Join(dir, "channel.port"), "--channel-limit", "3", "--broadcast-disabled", "com.example.disabled")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	b, err := os.ReadFile(filepath.Join(dir, "channel.port"))
	if err != nil {
		t.Fatal(err)
	}
	channelPort, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Port = port
	return cfg, channelPort
}

func openChannels(t *testing.T, cfg Config, port int) *Channels {
	t.Helper()
	ch, err := OpenChannels(cfg, "localhost", port)
	if err != nil {
		t.Fatalf("OpenChannels: %v", err)
	}
	t.Cleanup(ch.Close)
	return ch
}

const liveUpdate = `{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}`

func TestCreateBroadcastReadDeleteThenChannelNotRegistered(t *testing.T) {
	cfg, channelPort := broadcastMock(t)
	ch := openChannels(t, cfg, channelPort)
	c := open(t, cfg)
	id, err := ch.Create(testTopic, MostRecentMessageStored)
	if err != nil || len(id) == 0 || len(id)%4 != 0 {
		t.Fatalf("Create: %q, %v", id, err)
	}
	if policy, err := ch.Channel(testTopic, id); err != nil || policy != MostRecentMessageStored {
		t.Errorf("Channel: %v, %v", policy, err)
	}
	n := Broadcast(id, []byte(liveUpdate), time.Now().Add(time.Hour))
	n.Tag = 1
	n.APNsID = "0A9E1C52-2F86-4A36-9A31-42C5D8A3E4F1"
	if err := c.Send(n); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := collect(t, c, 1)[0]
	if !r.Accepted() || r.APNsID != "0a9e1c52-2f86-4a36-9a31-42c5d8a3e4f1" || len(r.UniqueID) != 36 || r.Tag != 1 {
		t.Errorf("broadcast result %+v", r)
	}
	ids, err := ch.List(testTopic)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("List: %v, %v", ids, err)
	}
	if err := ch.Delete(testTopic, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	n.Tag = 2
	n.APNsID = ""
	if err := c.Send(n); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r = collect(t, c, 1)[0]
	if r.Outcome != OutcomeRejected || r.Reason != ReasonChannelNotRegistered || r.Status != 400 {
		t.Errorf("after delete: %+v", r)
	}
	_, err = ch.Channel(testTopic, id)
	var ce *ChannelError
	if !errors.Is(err, ErrRejected) || !errors.As(err, &ce) || ce.Reason != ReasonChannelNotRegistered || ce.Status != 400 ||
		len(ce.RequestID) != 36 {
		t.Errorf("Channel after delete: %v (%+v)", err, ce)
	}
	if ids, err := ch.List(testTopic); err != nil || len(ids) != 0 {
		t.Errorf("List after delete: %v, %v", ids, err)
	}
}

func TestChannelRefusalsAreTypedErrors(t *testing.T) {
	cfg, channelPort := broadcastMock(t)
	ch := openChannels(t, cfg, channelPort)
	var ce *ChannelError
	if _, err := ch.Create("com.example.disabled", NoMessageStored); !errors.As(err, &ce) || ce.Reason != ReasonFeatureNotEnabled {
		t.Errorf("disabled app: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := ch.Create("com.example.limited", NoMessageStored); err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
	}
	if _, err := ch.Create("com.example.limited", NoMessageStored); !errors.As(err, &ce) || ce.Reason != ReasonCannotCreateChannelConfig {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ch.Channel(testTopic, "not base64"); !errors.Is(err, ErrBadChannelID) {
		t.Errorf("bad id: %v", err)
	}
	if _, err := ch.Create(testTopic, StoragePolicy(5)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad policy: %v", err)
	}
	ch.Close()
	if _, err := ch.List(testTopic); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := OpenChannels(cfg, "", 0); !errors.Is(err, ErrBadOption) {
		t.Errorf("no management host for a mock: %v", err)
	}
}

func TestBroadcastsAreCheckedBeforeSendingAndNoStorageNeedsTryOnce(t *testing.T) {
	cfg, channelPort := broadcastMock(t)
	ch := openChannels(t, cfg, channelPort)
	c := open(t, cfg)
	id, err := ch.Create(testTopic, NoMessageStored)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(Notification{ChannelID: id, Payload: []byte(liveUpdate), PushType: PushTypeLiveActivity}); !errors.Is(err, ErrBadExpiration) {
		t.Errorf("no expiration: %v", err)
	}
	if err := c.Send(Notification{ChannelID: id, Payload: []byte(liveUpdate), Expiration: TryOnce}); !errors.Is(err, ErrBadPushType) {
		t.Errorf("alert: %v", err)
	}
	if err := c.Send(Broadcast("abc", []byte(liveUpdate), time.Time{})); !errors.Is(err, ErrInvalidNotification) {
		t.Errorf("bad channel id: %v", err)
	}
	late := Broadcast(id, []byte(liveUpdate), time.Now().Add(time.Hour))
	late.Tag = 1
	now := Broadcast(id, []byte(liveUpdate), time.Time{}) // TryOnce
	now.Tag = 2
	if n, err := c.SendBatch([]Notification{late, now}); n != 2 || err != nil {
		t.Fatalf("SendBatch: %d, %v", n, err)
	}
	for _, r := range collect(t, c, 2) {
		if r.Tag == 1 && r.Reason != ReasonBadExpirationDate || r.Tag == 2 && !r.Accepted() {
			t.Errorf("result %+v", r)
		}
	}
}

func TestPayloadStartsALiveActivityWithTheIOS18Keys(t *testing.T) {
	p := NewPayload()
	defer p.Free()
	for _, set := range []struct {
		f PayloadField
		v interface{}
	}{{PayloadEvent, "start"}, {PayloadAttributesType, "MatchAttributes"}, {PayloadAttributes, []byte(`{"home":"A"}`)},
		{PayloadInputPushToken, 1}, {PayloadInputPushChannel, "dHN0LXNyY2gtY2hubA=="}} {
		if err := p.Set(set.f, set.v); err != nil {
			t.Fatalf("Set %v: %v", set.f, err)
		}
	}
	if _, err := p.Build(); !errors.Is(err, ErrBadPayload) || !strings.Contains(err.Error(), "alert") {
		t.Errorf("a start without an alert: %v", err)
	}
	if err := p.Set(PayloadAlertTitle, "Kick-off"); err != nil {
		t.Fatal(err)
	}
	b, err := p.Build()
	if err != nil || !strings.Contains(string(b), `"input-push-token":1,"input-push-channel":"dHN0LXNyY2gtY2hubA=="`) {
		t.Errorf("Build: %s, %v", b, err)
	}
	if err := p.Set(PayloadEvent, "update"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Build(); !errors.Is(err, ErrBadPayload) || !strings.Contains(err.Error(), "start") {
		t.Errorf("input-push-* on an update: %v", err)
	}
}

// TestTheReadmeBroadcastExampleRuns builds the Go program of README.md's "Broadcast push"
// section as written, in a module of its own that points at this one, and runs it against a
// mock with a management listener.
func TestTheReadmeBroadcastExampleRuns(t *testing.T) {
	cfg, channelPort := broadcastMock(t)
	example, err := exec.Command("python3", "../../scripts/readme-block.py", "../../README.md", "Broadcast push", "go").Output()
	if err != nil {
		t.Fatalf("readme-block.py: %v", err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example\n\ngo 1.19\n\nrequire swiftpush.dev/swiftpush v0.0.0\n\nreplace swiftpush.dev/swiftpush => " + here + "\n"
	key, err := os.ReadFile(filepath.Join(pkiDir, "AuthKey_TESTKEY001.p8"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "main.go": example, "AuthKey_TESTKEY001.p8": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "APNS_HOST=localhost", "APNS_PORT="+strconv.Itoa(cfg.Port),
		"APNS_CA_FILE="+filepath.Join(pkiDir, "ca.pem"), "APNS_CHANNEL_HOST=localhost",
		"APNS_CHANNEL_PORT="+strconv.Itoa(channelPort), "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got := strings.Join(strings.Fields(string(out)), " "); got != "ACCEPTED 200" {
		t.Errorf("output %q, want \"ACCEPTED 200\"", out)
	}
}
