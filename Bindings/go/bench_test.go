package swiftpush

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkSendBatch measures the batched path from one goroutine: SendBatch in chunks of 1024
// with at most 20,000 notifications outstanding, polling between chunks (like
// Bindings/c/examples/load.c). Run it with a fixed count, e.g.
//
//	go test -run '^$' -bench SendBatch -benchtime 200000x
//
// and read the notifications/s metric.
func BenchmarkSendBatch(b *testing.B) {
	const chunk, window = 1024, 20000
	cfg := testConfig(b)
	cfg.QueueCapacity = window + 2*chunk
	c := open(b, cfg)
	if err := c.WaitConnected(10 * time.Second); err != nil {
		b.Fatal(err)
	}
	head := `{"aps":{"alert":"Hello from swiftpush"},"pad":"`
	payload := []byte(head + strings.Repeat("x", 200-len(head)-2) + `"}`)
	batch := make([]Notification, chunk)
	for i := range batch {
		batch[i] = Notification{Token: testToken, Payload: payload}
	}
	b.ResetTimer()
	start := time.Now()
	sent, done, accepted := 0, 0, 0
	for done < b.N {
		if sent < b.N && sent-done < window {
			n := b.N - sent
			if n > chunk {
				n = chunk
			}
			if n > window-(sent-done) {
				n = window - (sent - done)
			}
			for i := 0; i < n; i++ {
				batch[i].Tag = uint64(sent + i)
			}
			k, err := c.SendBatch(batch[:n])
			if err != nil {
				b.Fatal(err)
			}
			sent += k
		}
		wait := time.Duration(0)
		if sent >= b.N || sent-done >= window {
			wait = 100 * time.Millisecond
		}
		rs, err := c.Poll(4096, wait)
		if err != nil {
			b.Fatal(err)
		}
		for i := range rs {
			if rs[i].Outcome == OutcomeAccepted {
				accepted++
			}
		}
		done += len(rs)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if accepted != b.N {
		b.Fatalf("%d of %d accepted", accepted, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "notifications/s")
}
