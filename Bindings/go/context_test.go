package swiftpush

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// cancelBound is how long after its context ends a call may take to return: the calls notice
// at once (a poller deadline, a channel) or within waitSlice; the rest is a loaded machine's
// scheduling.
const cancelBound = 500 * time.Millisecond

// silentConfig is testConfig pointed at a listener that accepts connections and never says
// anything: no TLS handshake finishes, no notification is ever sent or answered.
func silentConfig(t *testing.T) Config {
	t.Helper()
	cfg := testConfig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range conns {
			conn.Close()
		}
	})
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	cfg.QueueCapacity = 16
	cfg.DrainTimeout = -1 // nothing can drain: the test's Close cancels at once
	return cfg
}

func notifications(count int, firstTag uint64) []Notification {
	ns := make([]Notification, count)
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: []byte(testPayload), Tag: firstTag + uint64(i)}
	}
	return ns
}

// cancelLater cancels a context after d and returns when it did (read after the call returned).
func cancelLater(d time.Duration) (context.Context, func() time.Time) {
	ctx, cancel := context.WithCancel(context.Background())
	at := make(chan time.Time, 1)
	time.AfterFunc(d, func() { at <- time.Now(); cancel() })
	return ctx, func() time.Time { return <-at }
}

func TestSendContextReturnsPromptlyWhenCancelledWhileTheQueueIsFull(t *testing.T) {
	c := open(t, silentConfig(t))
	if n, err := c.SendBatch(notifications(16, 0)); n != 16 || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	ctx, cancelledAt := cancelLater(50 * time.Millisecond)
	err := c.SendContext(ctx, Notification{Token: testToken, Payload: []byte(testPayload), Tag: 100})
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("SendContext = %v, want context.Canceled", err)
	}
	late := returned.Sub(cancelledAt())
	if late > cancelBound {
		t.Errorf("returned %v after the cancellation", late)
	}
	t.Logf("returned %v after the cancellation", late)
	n, err := c.SendBatchContext(ctx, notifications(2, 200))
	if n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("SendBatchContext with a cancelled context = %d, %v", n, err)
	}
	deadline, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err = c.SendBatchContext(deadline, notifications(2, 300))
	if n != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SendBatchContext past its deadline = %d, %v", n, err)
	}
	_ = c.Close()
	tags := map[uint64]bool{}
	for _, r := range collect(t, c, 16) {
		tags[r.Tag] = true
	}
	if _, err := c.Poll(10, 0); len(tags) != 16 || !errors.Is(err, ErrClosed) {
		t.Errorf("results for tags %v then %v: want the 16 of SendBatch only", tags, err)
	}
}

func TestPollContextReturnsPromptlyWhenCancelled(t *testing.T) {
	c := open(t, silentConfig(t))
	if err := c.SendContext(context.Background(), notifications(1, 0)[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancelledAt := cancelLater(50 * time.Millisecond)
	rs, err := c.PollContext(ctx, 10)
	returned := time.Now()
	if len(rs) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("PollContext = %v, %v; want context.Canceled", rs, err)
	}
	late := returned.Sub(cancelledAt())
	if late > cancelBound {
		t.Errorf("returned %v after the cancellation", late)
	}
	t.Logf("returned %v after the cancellation", late)
	deadline, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.PollContext(deadline, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("PollContext past its deadline = %v", err)
	}
	if took := time.Since(start); took > 50*time.Millisecond+cancelBound {
		t.Errorf("PollContext took %v with a 50 ms deadline", took)
	}
}

func TestWaitConnectedContextReturnsPromptlyWithTheReason(t *testing.T) {
	c := open(t, silentConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.WaitConnectedContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("WaitConnectedContext = %v, want context.DeadlineExceeded and ErrTimeout", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond+cancelBound {
		t.Errorf("took %v with a 100 ms deadline", took)
	}
	ok := open(t, testConfig(t))
	if err := ok.WaitConnectedContext(context.Background()); err != nil {
		t.Errorf("WaitConnectedContext on the mock: %v", err)
	}
}

func TestCloseContextCancelsWhatItCouldNotDrainWhenItsContextEnds(t *testing.T) {
	c := open(t, silentConfig(t))
	if n, err := c.SendBatchContext(context.Background(), notifications(3, 0)); n != 3 || err != nil {
		t.Fatalf("SendBatchContext = %d, %v", n, err)
	}
	ctx, cancelledAt := cancelLater(50 * time.Millisecond)
	err := c.CloseContext(ctx)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CloseContext = %v, want context.Canceled", err)
	}
	late := returned.Sub(cancelledAt())
	if late > cancelBound {
		t.Errorf("returned %v after the cancellation", late)
	}
	t.Logf("returned %v after the cancellation", late)
	rs := collect(t, c, 3)
	for _, r := range rs {
		if r.Outcome != OutcomeFailed || r.Reason != ReasonCancelled {
			t.Errorf("result %+v, want FAILED Cancelled", r)
		}
	}
	if err := c.SendContext(context.Background(), notifications(1, 9)[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("SendContext after CloseContext = %v, want ErrClosed", err)
	}
	if _, err := c.PollContext(context.Background(), 10); !errors.Is(err, ErrClosed) {
		t.Errorf("PollContext once every result was returned = %v, want ErrClosed", err)
	}
}

func TestCloseContextWaitsUntilEveryNotificationIsAnswered(t *testing.T) {
	cfg := testConfig(t)
	cfg.DrainTimeout = -1 // (Close would not drain: only CloseContext's own wait can)
	c := open(t, cfg)
	const count = 500
	if n, err := c.SendBatchContext(context.Background(), notifications(count, 0)); n != count || err != nil {
		t.Fatalf("SendBatchContext = %d, %v", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.CloseContext(ctx); err != nil {
		t.Fatalf("CloseContext = %v", err)
	}
	for _, r := range collect(t, c, count) {
		if !r.Accepted() {
			t.Fatalf("result %+v, want accepted (CloseContext returned before its answer)", r)
		}
	}
}

func TestSendBatchContextWaitsForTheRoomPollContextFrees(t *testing.T) {
	cfg := testConfig(t)
	cfg.QueueCapacity = 64 // 5000 notifications wait for room ~80 times
	c := open(t, cfg)
	const count = 5000
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := make([]int, count)
	got := make(chan error, 1)
	go func() {
		for n := 0; n < count; {
			rs, err := c.PollContext(ctx, 1024)
			if err != nil {
				got <- err
				return
			}
			for _, r := range rs {
				if !r.Accepted() {
					got <- errors.New("not accepted: " + r.Reason.String())
					return
				}
				seen[r.Tag]++
			}
			n += len(rs)
		}
		got <- nil
	}()
	if n, err := c.SendBatchContext(ctx, notifications(count, 0)); n != count || err != nil {
		t.Fatalf("SendBatchContext = %d, %v", n, err)
	}
	if err := <-got; err != nil {
		t.Fatalf("PollContext: %v", err)
	}
	for tag, times := range seen {
		if times != 1 {
			t.Fatalf("tag %d: %d results", tag, times)
		}
	}
}

func TestResultsContextClosesWhenItsContextEndsAndLosesNoResult(t *testing.T) {
	c := open(t, testConfig(t))
	const count = 50
	if n, err := c.SendBatch(notifications(count, 100)); n != count || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	// Close drains: all 50 results wait in the client, and the goroutine's first poll takes
	// every one of them, so when its context ends it holds some it has not delivered.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := c.ResultsContext(ctx)
	seen := map[uint64]int{}
	first := <-ch
	seen[first.Tag]++
	cancel()
	cancelledAt := time.Now()
	for r := range ch { // closed promptly (it may hand over a few more first)
		seen[r.Tag]++
	}
	if late := time.Since(cancelledAt); late > cancelBound {
		t.Errorf("closed %v after the cancellation", late)
	}
	delivered := len(seen)
	// The rest come from the next polls, then ErrClosed.
	for {
		rs, err := c.Poll(count, 0)
		for _, r := range rs {
			seen[r.Tag]++
		}
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatal(err)
			}
			break
		}
	}
	t.Logf("%d delivered before the channel closed, %d polled after", delivered, len(seen)-delivered)
	if len(seen) != count || delivered == count {
		t.Errorf("%d results in all, %d through the channel; want %d, some kept", len(seen), delivered, count)
	}
	for tag, n := range seen {
		if n != 1 || tag < 100 || tag >= 100+count {
			t.Errorf("tag %d seen %d times", tag, n)
		}
	}
}
