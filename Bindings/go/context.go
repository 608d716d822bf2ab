package swiftpush

// The calls that wait, with a context.Context: cancelling the context (or its deadline passing)
// ends the wait promptly with ctx.Err(). None of them waits inside the library where a
// cancellation could not reach it:
//   - SendContext/SendBatchContext try with no wait and, on a full queue, wait here for a poll
//     to free room (swiftpush.go, sendPacked);
//   - PollContext and CloseContext wait on the client's result descriptor
//     (push_client_result_fd) through Go's poller, whose read deadline the cancellation sets;
//   - WaitConnectedContext, which has no descriptor, waits inside the library in slices of
//     waitSlice.

/*
#include "swiftpush.h"
*/
import "C"

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// waitSlice is the longest wait inside the library of a call that has no descriptor to wait
// on (WaitConnectedContext): how late, at most, it notices a cancellation.
const waitSlice = 10 * time.Millisecond

// errFreed: the C client was freed by Close (whenReady's callers fall back to what Close kept).
var errFreed = errors.New("swiftpush: client freed")

// SendContext is Send with a context instead of Config.SendTimeout: when the queue is full it
// waits for room until ctx is done, then returns ctx.Err() and the notification is not queued
// (it gets no Result). Once queued, the notification's deadline is ctx's deadline, if ctx has
// one sooner than its own (Notification.Deadline, or Config.Deadline): its Result comes by then,
// OutcomeFailed with ReasonQueueTimeout or ReasonTimeout if APNs has not answered. (Cancelling
// ctx after the call returned does not recall the notification.) Other errors as Send.
func (c *Client) SendContext(ctx context.Context, n Notification) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.sendOne(ctx, n)
}

// SendBatchContext is SendBatch with a context instead of Config.SendTimeout: it returns how
// many notifications were queued, in order, and ctx.Err() if ctx ended while it waited for
// room (those after are not queued and get no Result). ctx's deadline bounds each queued
// notification's, as with SendContext. Other errors as SendBatch.
func (c *Client) SendBatchContext(ctx context.Context, ns []Notification) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.sendBatch(ctx, ns)
}

// PollContext returns up to max results, waiting for the first until ctx is done (then it
// returns ctx.Err()). It returns an error matching ErrClosed once the client is closed and
// every result has been returned, as Poll does.
func (c *Client) PollContext(ctx context.Context, max int) ([]Result, error) {
	if max <= 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if out := c.takeKept(max); out != nil {
		return out, nil
	}
	var out []Result
	var pollErr error
	err := c.whenReady(ctx, func() bool {
		out, pollErr = c.pollC(max, 0)
		return len(out) > 0 || pollErr != nil
	})
	if err == errFreed {
		return c.pollLeft(max)
	}
	if err != nil {
		return nil, err
	}
	return out, pollErr
}

// ResultsContext is Results until ctx is done: the channel (unbuffered, so slower than
// Results') is closed when ctx ends, or once the client is closed and every result has been
// delivered. Results the goroutine had taken
// out of the library but not delivered when ctx ended are not lost: the next Poll,
// PollContext, Results or ResultsContext returns them first.
func (c *Client) ResultsContext(ctx context.Context) <-chan Result {
	// Unbuffered: a result is handed over only when it is received, so none is left in a
	// buffer nobody reads once ctx has ended.
	ch := make(chan Result)
	go func() {
		defer close(ch)
		for {
			rs, err := c.PollContext(ctx, 1024)
			for i, r := range rs {
				select {
				case ch <- r:
				case <-ctx.Done():
					c.keep(rs[i:])
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// keep puts results back in front of the next poll's (ResultsContext's undelivered ones).
func (c *Client) keep(rs []Result) {
	c.keptMu.Lock()
	c.kept = append(c.kept, rs...)
	c.keptCount.Store(int64(len(c.kept)))
	c.keptMu.Unlock()
}

// takeKept returns up to max kept results, or nil when none are kept (one atomic load: the
// polls' usual case).
func (c *Client) takeKept(max int) []Result {
	if c.keptCount.Load() == 0 {
		return nil
	}
	c.keptMu.Lock()
	defer c.keptMu.Unlock()
	if len(c.kept) == 0 {
		return nil
	}
	if max > len(c.kept) {
		max = len(c.kept)
	}
	out := append([]Result(nil), c.kept[:max]...)
	c.kept = c.kept[max:]
	c.keptCount.Store(int64(len(c.kept)))
	return out
}

// WaitConnectedContext is WaitConnected until ctx is done. When ctx ends first, the error
// matches ctx.Err() (errors.Is(err, context.DeadlineExceeded)) and, once a connection attempt
// has failed, ErrTimeout too, its message ending with the last connection error.
func (c *Client) WaitConnectedContext(ctx context.Context) error {
	if ctx.Done() == nil {
		return c.WaitConnected(-1)
	}
	var last error
	for {
		if err := ctx.Err(); err != nil {
			if last == nil {
				return err
			}
			return &waitError{ctx: err, last: last}
		}
		slice := waitSlice
		if d, ok := ctx.Deadline(); ok && time.Until(d) < slice {
			slice = time.Until(d)
			if slice < time.Millisecond {
				slice = time.Millisecond
			}
		}
		err := c.WaitConnected(slice)
		if err == nil || !errors.Is(err, ErrTimeout) {
			return err
		}
		last = err
	}
}

// waitError is a wait that its context ended after the library had reported why it was
// still waiting: it matches both (errors.Is), and says both.
type waitError struct {
	ctx  error // context.Canceled or context.DeadlineExceeded
	last error // the library's last word, an *Error
}

// Error returns the context's error followed by the library's message.
func (e *waitError) Error() string { return e.ctx.Error() + " (" + e.last.Error() + ")" }

// Unwrap returns the context's error.
func (e *waitError) Unwrap() error { return e.ctx }

// Is matches what the library said (ErrTimeout, ...), besides the context's error (Unwrap).
func (e *waitError) Is(target error) bool { return errors.Is(e.last, target) }

// CloseContext is Close with a context instead of Config.DrainTimeout: sends fail with
// ErrClosed from the start; the notifications already queued or in flight may finish until
// ctx is done; then the rest end as FAILED results (ReasonCancelled,
// ReasonCancelledInFlight) and the C client is freed, as Close does. It returns ctx.Err() when
// ctx ended the drain (every notification has its Result all the same), nil otherwise.
func (c *Client) CloseContext(ctx context.Context) error {
	c.closing.Store(true)
	c.roomFreed() // SendContext calls waiting for room end with ErrClosed
	err := ctx.Err()
	if err == nil {
		// Every notification the library accepted has its outcome once the outcome counters
		// reach the count sent; each outcome is published with its result, which makes the
		// descriptor readable.
		err = c.whenReady(ctx, func() bool {
			var s C.push_stats
			if C.push_client_stats(c.h, &s, C.ptrdiff_t(C.sizeof_push_stats)) != 0 {
				return true
			}
			return uint64(s.accepted+s.rejected+s.failed) >= c.sent.Load()
		})
		if err == errFreed {
			err = nil
		}
	}
	c.closeWith(0)
	return err
}

// whenReady calls ready (with c.mu held for reading and c.h open) until it returns true,
// waiting between calls until the result descriptor is readable, and returns nil; ctx's error
// when ctx ends first; errFreed when the C client was freed.
//
// The descriptor is the library's eventfd, written at every publication of results: a dup of
// it registered with Go's poller (edge-triggered) wakes on each, and RawConn.Read resets the
// readiness before each call of ready, so a publication between ready's check and the wait is
// not missed. A cancelled ctx sets a read deadline in the past, which ends the wait at once.
func (c *Client) whenReady(ctx context.Context, ready func() bool) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.h == nil {
		return errFreed
	}
	if ready() {
		return nil
	}
	f := c.resultFile()
	if f == nil {
		return c.sliced(ctx, ready)
	}
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return c.sliced(ctx, ready)
	}
	if d, ok := ctx.Deadline(); ok {
		if f.SetReadDeadline(d) != nil { // not in the poller after all
			return c.sliced(ctx, ready)
		}
	}
	if done := ctx.Done(); done != nil {
		stop := make(chan struct{})
		defer close(stop) // (runs before f.Close)
		go func() {
			select {
			case <-done:
				_ = f.SetReadDeadline(time.Unix(1, 0))
			case <-stop:
			}
		}()
	}
	err = raw.Read(func(uintptr) bool { return ready() })
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded): // ctx's deadline, a moment before ctx noticed it
		return context.DeadlineExceeded
	default: // the poller refused the descriptor
		return c.sliced(ctx, ready)
	}
}

// resultFile returns a new *os.File on a duplicate of the result descriptor, in Go's poller
// (nil if that cannot be had). Each waiting call has its own: a deadline set to cancel one
// call must not end another's wait, and an os.File serializes its readers.
func (c *Client) resultFile() *os.File {
	var fd C.int32_t
	var e C.push_error
	if C.push_client_result_fd(c.h, &fd, &e) != 0 {
		return nil
	}
	syscall.ForkLock.RLock() // no exec between dup and close-on-exec
	dup, err := syscall.Dup(int(fd))
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil
	}
	// The eventfd is non-blocking (a flag the duplicate shares), so NewFile puts it in the poller.
	return os.NewFile(uintptr(dup), "swiftpush-results")
}

// sliced is whenReady without the poller: ready every waitSlice until ctx is done.
func (c *Client) sliced(ctx context.Context, ready func() bool) error {
	t := time.NewTicker(waitSlice)
	defer t.Stop()
	for !ready() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
