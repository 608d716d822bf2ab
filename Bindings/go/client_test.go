package swiftpush

import (
	"errors"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestOneNotificationIsAcceptedWithItsAPNsIDAndTag(t *testing.T) {
	c := open(t, testConfig(t))
	if err := c.WaitConnected(10 * time.Second); err != nil {
		t.Fatalf("WaitConnected: %v", err)
	}
	err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload), Tag: 0xFEEDFACECAFEBEEF,
		APNsID: "123E4567-E89B-12D3-A456-426614174000", CollapseID: "score", Priority: PriorityImmediate,
		Expiration: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := collect(t, c, 1)[0]
	if !r.Accepted() || r.Status != 200 || r.Reason != ReasonNone || r.ReasonText != "" {
		t.Errorf("result %+v, want accepted", r)
	}
	if r.APNsID != "123e4567-e89b-12d3-a456-426614174000" || r.Tag != 0xFEEDFACECAFEBEEF || r.Attempts != 1 {
		t.Errorf("result %+v: apns-id lowercased, tag echoed, one attempt", r)
	}
	if r.Latency <= 0 || !r.Timestamp.IsZero() {
		t.Errorf("result %+v: latency > 0, no timestamp", r)
	}
}

func TestSendBatchOf100000EachGetsExactlyOneAcceptedResult(t *testing.T) {
	const count = 100000
	cfg := testConfig(t)
	cfg.QueueCapacity = 16384 // smaller than count: the poller must keep up
	c := open(t, cfg)
	seen := make([]int, count)
	var failures []Result
	done := make(chan int)
	go func() {
		got := 0
		for got < count {
			rs, err := c.Poll(4096, 20*time.Second)
			if err != nil || len(rs) == 0 {
				break
			}
			for _, r := range rs {
				if r.Tag < count {
					seen[r.Tag]++
				}
				if !r.Accepted() && len(failures) < 5 {
					failures = append(failures, r)
				}
			}
			got += len(rs)
		}
		done <- got
	}()
	ns := make([]Notification, count)
	payload := []byte(testPayload)
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: payload, Tag: uint64(i)}
	}
	n, err := c.SendBatch(ns)
	if n != count || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	got := <-done
	if got != count {
		t.Errorf("%d results, want %d", got, count)
	}
	for tag, times := range seen {
		if times != 1 {
			t.Fatalf("tag %d: %d results", tag, times)
		}
	}
	if len(failures) > 0 {
		t.Errorf("not accepted: %+v", failures)
	}
}

func TestBadInputIsRefusedWithErrInvalidNotificationAndAClearMessage(t *testing.T) {
	c := open(t, testConfig(t))
	noTopic := testConfig(t)
	noTopic.Topic = ""
	bare := open(t, noTopic)
	good := Notification{Token: testToken, Payload: []byte(testPayload)}
	cases := []struct {
		name   string
		client *Client
		change func(n *Notification)
		code   Status
		words  string
	}{
		{"odd token", c, func(n *Notification) { n.Token = "00fc13a" }, StatusBadDeviceToken, "odd"},
		{"non-hex token", c, func(n *Notification) { n.Token = "00fc13adzz" }, StatusBadDeviceToken, "non-hex"},
		{"oversized payload", c, func(n *Notification) { n.Payload = []byte("{" + strings.Repeat(" ", 5000) + "}") },
			StatusPayloadTooLarge, "4096"},
		{"invalid JSON", c, func(n *Notification) { n.Payload = []byte(`{"aps":`) }, StatusBadPayload, "JSON"},
		{"background at priority 10", c, func(n *Notification) { n.PushType, n.Priority = PushTypeBackground, PriorityImmediate },
			StatusBadPriority, "priority 5"},
		{"missing topic", bare, func(n *Notification) {}, StatusBadTopic, "topic"},
		{"long collapse id", c, func(n *Notification) { n.CollapseID = strings.Repeat("x", 65) }, StatusBadCollapseID, ""},
		{"bad apns-id", c, func(n *Notification) { n.APNsID = "not-a-uuid" }, StatusBadAPNsID, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := good
			tc.change(&n)
			err := tc.client.Send(n)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Send = %v, want an *Error", err)
			}
			if !errors.Is(err, ErrInvalidNotification) || !errors.Is(err, tc.code) || e.Code != tc.code {
				t.Errorf("Send = %v (code %d), want code %d and ErrInvalidNotification", err, e.Code, tc.code)
			}
			if !strings.Contains(e.Message, tc.words) || e.Message == "" {
				t.Errorf("message %q does not mention %q", e.Message, tc.words)
			}
			if errors.Is(err, ErrQueueFull) || errors.Is(err, ErrClosed) {
				t.Errorf("%v matches an unrelated sentinel", err)
			}
		})
	}
}

func TestSendBatchStopsAtTheFirstInvalidNotificationAndNamesIt(t *testing.T) {
	c := open(t, testConfig(t))
	ns := make([]Notification, 5000)
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: []byte(testPayload), Tag: uint64(i)}
	}
	ns[4500].Token = "00fc13a"
	n, err := c.SendBatch(ns)
	if n != 4500 || !errors.Is(err, ErrBadDeviceToken) {
		t.Fatalf("SendBatch = %d, %v; want 4500, ErrBadDeviceToken", n, err)
	}
	if !strings.HasPrefix(err.Error(), "swiftpush: notification 4500: device token has an odd number") {
		t.Errorf("message %q", err.Error())
	}
	if rs := collect(t, c, 4500); len(rs) != 4500 {
		t.Errorf("%d results", len(rs))
	}
}

func TestAWrongKeyIsRejectedWithInvalidProviderToken(t *testing.T) {
	cfg := testConfig(t)
	cfg.KeyFile = filepath.Join(pkiDir, "AuthKey_WRONGKEY01.p8")
	c := open(t, cfg)
	ns := []Notification{{Token: testToken, Payload: []byte(testPayload), Tag: 1}, {Token: testToken, Payload: []byte(testPayload), Tag: 2}}
	if n, err := c.SendBatch(ns); n != 2 || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	for _, r := range collect(t, c, 2) {
		if r.Outcome != OutcomeRejected || r.Status != 403 || r.Reason != ReasonInvalidProviderToken ||
			r.ReasonText != "InvalidProviderToken" || r.Reason.RetryClass() != "refused" {
			t.Errorf("result %+v, want REJECTED 403 InvalidProviderToken", r)
		}
	}
}

func TestAnUntrustedCertificateFailsWaitConnectedWithErrTLS(t *testing.T) {
	cfg := testConfig(t)
	if untrustedPort == 0 {
		t.Skip("no untrusted mock (SWIFTPUSH_MOCK_PORT given)")
	}
	cfg.Port = untrustedPort
	c := open(t, cfg)
	err := c.WaitConnected(10 * time.Second)
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "certificate verify failed") {
		t.Fatalf("WaitConnected = %v, want ErrTLS naming the certificate", err)
	}
}

func TestOpenReportsConfigurationErrors(t *testing.T) {
	cfg := testConfig(t)
	cfg.KeyFile = "/nonexistent/AuthKey.p8"
	if _, err := Open(cfg); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "/nonexistent/AuthKey.p8") {
		t.Errorf("unreadable key: %v", err)
	}
	cfg = testConfig(t)
	cfg.Port = 70000
	if _, err := Open(cfg); !errors.Is(err, ErrBadOption) {
		t.Errorf("port 70000: %v", err)
	}
	if _, err := Open(Config{Host: "localhost"}); !errors.Is(err, ErrKey) {
		t.Errorf("no credentials: %v", err)
	}
	cfg = testConfig(t)
	cfg.Options = map[Option]interface{}{OptionMaxStreams: 3.5}
	if _, err := Open(cfg); !errors.Is(err, ErrBadOption) {
		t.Errorf("float option: %v", err)
	}
}

// Options are applied by value, so OptionP12File (24) reaches the library before
// OptionP12Password (25): the order that used to need re-sorting in the binding. The library
// opens the .p12 with its password in Open, so a right password opens and a wrong one fails there.
func TestAP12FileMayComeBeforeItsPassword(t *testing.T) {
	if mockSkip != "" {
		t.Skip(mockSkip)
	}
	for _, password := range []string{"secret", "wrong"} {
		cfg := Config{Host: "127.0.0.1", Port: 1, Options: map[Option]interface{}{
			OptionP12File: filepath.Join(pkiDir, "client.p12"), OptionP12Password: password}}
		c, err := Open(cfg)
		if password == "secret" {
			if err != nil {
				t.Fatalf("Open with the right .p12 password: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		} else if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "wrong password") {
			t.Errorf("Open with a wrong .p12 password = %v, want ErrKey naming the wrong password", err)
		}
	}
}

func TestCloseTwiceThenPollReturnsWhatIsLeft(t *testing.T) {
	c := open(t, testConfig(t))
	ns := make([]Notification, 50)
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: []byte(testPayload), Tag: uint64(i)}
	}
	if n, err := c.SendBatch(ns); n != 50 || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var tags []int
	for r := range c.Results() {
		tags = append(tags, int(r.Tag))
	}
	sort.Ints(tags)
	if len(tags) != 50 || tags[0] != 0 || tags[49] != 49 {
		t.Errorf("tags after close: %v", tags)
	}
	if _, err := c.Poll(10, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Poll after everything was returned: %v", err)
	}
}

func TestSendAfterCloseIsErrClosed(t *testing.T) {
	c := open(t, testConfig(t))
	_ = c.Close()
	if err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if n, err := c.SendBatch([]Notification{{Token: testToken, Payload: []byte(testPayload)}}); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("SendBatch after Close: %d, %v", n, err)
	}
	if err := c.WaitConnected(time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitConnected after Close: %v", err)
	}
	if _, err := c.Stats(); !errors.Is(err, ErrClosed) {
		t.Errorf("Stats after Close: %v", err)
	}
}

func TestCloseWakesASendWaitingForRoom(t *testing.T) {
	cfg := testConfig(t)
	cfg.QueueCapacity = 16
	cfg.DrainTimeout = -1
	c := open(t, cfg)
	ns := make([]Notification, 40) // more than fit while nobody polls
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: []byte(testPayload), Tag: uint64(i)}
	}
	sent := make(chan error)
	go func() { _, err := c.SendBatch(ns); sent <- err }()
	// The send is blocked once all 16 slots hold results nobody polls: wait for that state,
	// and check that the send has not returned.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := c.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if s.Unpolled == 16 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue never filled: %+v", s)
		}
		time.Sleep(2 * time.Millisecond) // polling a condition, not waiting for a guess
	}
	select {
	case err := <-sent:
		t.Fatalf("SendBatch returned (%v) while the queue was full: it should wait for room", err)
	default:
	}
	_ = c.Close()
	select {
	case err := <-sent:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("blocked SendBatch ended with %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake the blocked SendBatch")
	}
}

func TestFourGoroutinesSendWhileTwoPoll(t *testing.T) {
	fourSendersTwoPollers(t, testConfig(t), func(*Client) {})
}

func TestThreeIOThreadsShareTheWorkAndEveryResultComesOnce(t *testing.T) {
	cfg := testConfig(t)
	cfg.IOThreads = 3
	cfg.Connections = 3
	fourSendersTwoPollers(t, cfg, func(c *Client) {
		s, err := c.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if s.ConnectionsStarted < 3 || len(s.Connections) != 3 {
			t.Errorf("stats %+v: one connection for each of the 3 threads", s)
		}
	})
}

// fourSendersTwoPollers sends 20,000 notifications from four goroutines while two read
// Results, calls beforeClose, closes, and checks that each tag came back once.
func fourSendersTwoPollers(t *testing.T, cfg Config, beforeClose func(*Client)) {
	cfg.QueueCapacity = 4096
	c := open(t, cfg)
	const senders, perSender = 4, 5000
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func(first int) {
			defer wg.Done()
			for start := first; start < first+perSender; start += 500 {
				ns := make([]Notification, 500)
				for i := range ns {
					ns[i] = Notification{Token: testToken, Payload: []byte(testPayload), Tag: uint64(start + i)}
				}
				if _, err := c.SendBatch(ns); err != nil {
					errs <- err
					return
				}
			}
		}(s * perSender)
	}
	var mu sync.Mutex
	var tags []int
	var pollers sync.WaitGroup
	ch := c.Results()
	for p := 0; p < 2; p++ {
		pollers.Add(1)
		go func() {
			defer pollers.Done()
			for r := range ch {
				mu.Lock()
				tags = append(tags, int(r.Tag))
				mu.Unlock()
				if !r.Accepted() {
					t.Errorf("not accepted: %+v", r)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("SendBatch: %v", err)
	}
	beforeClose(c)
	_ = c.Close() // lets the notifications in flight finish (DrainTimeout)
	pollers.Wait()
	sort.Ints(tags)
	if len(tags) != senders*perSender {
		t.Fatalf("%d results, want %d", len(tags), senders*perSender)
	}
	for i, tag := range tags {
		if tag != i {
			t.Fatalf("tags[%d] = %d: a result is missing or doubled", i, tag)
		}
	}
}

func TestStatsCountWhatHappened(t *testing.T) {
	c := open(t, testConfig(t))
	ns := []Notification{{Token: testToken, Payload: []byte(testPayload)}, {Token: testToken, Payload: []byte(testPayload)}}
	if _, err := c.SendBatch(ns); err != nil {
		t.Fatal(err)
	}
	collect(t, c, 2)
	s, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Accepted != 2 || s.Sent < 2 || s.ConnectionsStarted < 1 || len(s.Connections) == 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestGeneratedTablesMatchTheLibrary(t *testing.T) {
	for r := ReasonNone; r <= ReasonUnknown; r++ {
		if r.String() == "Unknown" && r != ReasonUnknown {
			continue
		}
		if got := cReasonName(r); got != r.String() {
			t.Errorf("reason %d: library %q, table %q", r, got, r.String())
		}
	}
	for s := Status(-100); s <= 0; s++ {
		if s.Message() == "unknown status code" {
			continue
		}
		if got := cStrerror(s); got != s.Message() {
			t.Errorf("status %d: library %q, table %q", s, got, s.Message())
		}
	}
	if LibraryVersion() == "" {
		t.Error("no version")
	}
}

func TestNothingListeningMakesWaitConnectedFailWithErrTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // a port that was free a moment ago
	cfg := testConfig(t)
	cfg.Host, cfg.Port = "127.0.0.1", port
	c := open(t, cfg)
	if err := c.WaitConnected(500 * time.Millisecond); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("WaitConnected = %v, want ErrTimeout with the connection error", err)
	}
}
