package swiftpush

// A deadline per notification: Notification.Deadline, and SendContext's context deadline, as
// push_notification.deadline_ms. Against a mock that never answers one token and a listener
// that never completes a handshake; the client's own deadline stays at its 60 s default, so only
// the notification's can end these waits within deadlineBound.

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// stalledToken is never answered by stallingConfig's mock.
const stalledToken = "5a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed00"

// deadlineBound is how long a 200 ms deadline may take to end, at most: the deadline, the
// library's 50 ms scan and a loaded machine's scheduling; a twelfth of the client's 60 s.
const deadlineBound = 5 * time.Second

// stallingClient is a client of a mock of its own that never answers stalledToken,
// with one notification accepted already (the mock allows one stream until a first success).
func stallingClient(t *testing.T) *Client {
	t.Helper()
	cfg := testConfig(t)
	cli := os.Getenv("SWIFTPUSH_CLI")
	if cli == "" {
		t.Skip("needs SWIFTPUSH_CLI to start a mock of its own")
	}
	m, port, err := startMock(cli, pkiDir, t.TempDir(), "stall", "server", "--stall-token", stalledToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	cfg.Port = port
	cfg.DrainTimeout = -1
	c := open(t, cfg)
	if err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload), Tag: 1}); err != nil {
		t.Fatal(err)
	}
	if rs := collect(t, c, 1); !rs[0].Accepted() {
		t.Fatalf("first notification: %+v", rs[0])
	}
	return c
}

// resultWithin polls one result, failing the test when none comes within deadlineBound.
func resultWithin(t *testing.T, c *Client) Result {
	t.Helper()
	rs, err := c.Poll(1, deadlineBound)
	if err != nil || len(rs) != 1 {
		t.Fatalf("Poll = %v, %v; want one result within %v", rs, err, deadlineBound)
	}
	return rs[0]
}

func TestSendContextsDeadlineBecomesTheNotificationsDeadline(t *testing.T) {
	c := stallingClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.SendContext(ctx, Notification{Token: stalledToken, Payload: []byte(testPayload), Tag: 2}); err != nil {
		t.Fatal(err)
	}
	r := resultWithin(t, c)
	took := time.Since(start)
	if r.Tag != 2 || r.Outcome != OutcomeFailed || r.Reason != ReasonTimeout {
		t.Errorf("result %+v; want tag 2 FAILED Timeout", r)
	}
	if took < 200*time.Millisecond || took >= deadlineBound {
		t.Errorf("took %v (the context's deadline is 200 ms, the client's 60 s)", took)
	}
	t.Logf("ended %v after the send", took)
}

func TestEachNotificationOfABatchHasItsOwnDeadline(t *testing.T) {
	c := stallingClient(t)
	ns := []Notification{
		{Token: stalledToken, Payload: []byte(testPayload), Tag: 10, Deadline: 200 * time.Millisecond},
		{Token: testToken, Payload: []byte(testPayload), Tag: 11},
		// A context deadline later than its own does not lengthen it.
		{Token: stalledToken, Payload: []byte(testPayload), Tag: 12, Deadline: 300 * time.Millisecond},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if n, err := c.SendBatchContext(ctx, ns); n != 3 || err != nil {
		t.Fatalf("SendBatchContext = %d, %v", n, err)
	}
	rs := collect(t, c, 3)
	took := time.Since(start)
	byTag := map[uint64]Result{}
	for _, r := range rs {
		byTag[r.Tag] = r
	}
	if r := byTag[10]; r.Outcome != OutcomeFailed || r.Reason != ReasonTimeout {
		t.Errorf("tag 10: %+v; want FAILED Timeout", r)
	}
	if r := byTag[11]; !r.Accepted() {
		t.Errorf("tag 11: %+v; want accepted", r)
	}
	if r := byTag[12]; r.Outcome != OutcomeFailed || r.Reason != ReasonTimeout {
		t.Errorf("tag 12: %+v; want FAILED Timeout", r)
	}
	if took < 300*time.Millisecond || took >= deadlineBound {
		t.Errorf("took %v (deadlines 200 and 300 ms)", took)
	}
}

func TestANotificationNeverSentEndsQueueTimeoutAtItsDeadline(t *testing.T) {
	c := open(t, silentConfig(t))
	start := time.Now()
	if err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload), Tag: 3, Deadline: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	r := resultWithin(t, c)
	took := time.Since(start)
	if r.Tag != 3 || r.Outcome != OutcomeFailed || r.Reason != ReasonQueueTimeout {
		t.Errorf("result %+v; want tag 3 FAILED QueueTimeout", r)
	}
	if took < 200*time.Millisecond || took >= deadlineBound {
		t.Errorf("took %v (deadline 200 ms, the client's 60 s)", took)
	}
}

func TestANegativeDeadlineIsRefusedNamingTheField(t *testing.T) {
	c := open(t, silentConfig(t))
	err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload), Deadline: -time.Millisecond})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(e.Message, "deadline_ms") {
		t.Fatalf("Send with a negative deadline = %v; want ErrInvalidArgument naming deadline_ms", err)
	}
}
