// Package swiftpush sends Apple push notifications through libswiftpush.so, an APNs provider
// client with its own TLS + HTTP/2 connections and I/O thread.
//
// Open a Client, hand it notifications (Send, or SendBatch: one cgo call per batch), and read
// back exactly one Result per notification (Poll, or the Results channel). Close is idempotent;
// a finalizer closes and frees a Client that was never closed.
//
// Building: the package finds swiftpush.h and libswiftpush.so with pkg-config (swiftpush.pc),
// so against an installed library (`make install`, the .deb) `go build` needs no flags; with
// another prefix, set PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig. In this repository,
//
//	PKG_CONFIG_PATH=$(scripts/dev-pkgconfig.sh .build/debug) go test
//
// points it at the checkout's header and a build directory's library.
//
// All methods are safe for concurrent use.
package swiftpush

/*
#cgo pkg-config: swiftpush
#include <stdlib.h>
#include "swiftpush.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"runtime/cgo"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Config (config.go) is generated from Tables/options.tsv by scripts/gen_tables.py.

// Client is an open APNs client. Create it with Open; all methods are safe for concurrent use.
type Client struct {
	// mu guards h: every C call holds it for reading; Close takes it for writing to free.
	mu   sync.RWMutex
	h    C.push_client_t
	send C.int32_t // SendTimeout in ms for the C calls
	// drain is DrainTimeout in ms.
	drain C.int32_t

	closeOnce sync.Once
	// left holds the results still unpolled when Close freed the C client.
	leftMu sync.Mutex
	left   []Result

	buffers sync.Pool // *[]C.push_result for Poll

	// logHandle keeps Config.Log reachable from C until the C client is freed (0: none).
	logHandle cgo.Handle

	// closing is set by CloseContext: sends fail with ErrClosed while it drains.
	closing atomic.Bool
	// sent counts the notifications the library accepted from this Client's sends, so that
	// CloseContext knows when every one has its outcome (context.go).
	sent atomic.Uint64
	// room is closed (and cleared) when a poll takes results out of the library, which is the
	// only thing that frees room in a full queue: SendContext waits on it (context.go).
	roomMu sync.Mutex
	room   chan struct{}
	// kept holds results a ResultsContext goroutine had taken out of the library but not
	// delivered when its context ended; the next poll returns them first (context.go).
	// keptCount is len(kept), read without the lock by every poll.
	keptMu    sync.Mutex
	kept      []Result
	keptCount atomic.Int64
}

// LibraryVersion returns the version of the library actually loaded ("MAJOR.MINOR.PATCH"), which
// may be newer than the Version this binding was released with (same ABI, docs/abi.md).
func LibraryVersion() string { return C.GoString(C.push_version()) }

func millis(d time.Duration) C.int32_t {
	if d < 0 {
		return -1
	}
	ms := d.Milliseconds()
	if ms > 1<<31-1 {
		ms = 1<<31 - 1
	}
	return C.int32_t(ms)
}

func errorFrom(rc C.int32_t, e *C.push_error) error {
	if rc == 0 {
		return nil
	}
	msg := ""
	if e != nil {
		msg = C.GoString(&e.message[0])
	}
	return newError(Status(rc), msg)
}

func setString(conf C.push_config_t, opt Option, value []byte, e *C.push_error) error {
	cs := C.CBytes(append(value, 0))
	defer C.free(cs)
	return errorFrom(C.push_config_set_string(conf, C.int32_t(opt), (*C.char)(cs), C.ptrdiff_t(len(value)), e), e)
}

func setInt(conf C.push_config_t, opt Option, value int64, e *C.push_error) error {
	return errorFrom(C.push_config_set_int(conf, C.int32_t(opt), C.int64_t(value), e), e)
}

// Open checks the configuration, signs the first provider token and starts the client's I/O
// thread, which connects in the background (see WaitConnected). Errors: ErrKey (no or bad
// credentials), ErrBadOption, ErrTLS (CA file unusable), as *Error with the library's message.
func Open(cfg Config) (*Client, error) {
	conf, err := newConfig(cfg)
	if err != nil {
		return nil, err
	}
	defer C.push_config_free(conf)
	var e C.push_error
	var logHandle cgo.Handle
	if cfg.Log != nil {
		var err error
		if logHandle, err = setLogCallback(conf, cfg.Log, cfg.LogLevel, &e); err != nil {
			return nil, err
		}
	}
	var h C.push_client_t
	if err := errorFrom(C.push_client_open(conf, &h, &e), &e); err != nil {
		if logHandle != 0 {
			logHandle.Delete()
		}
		return nil, err
	}
	c := &Client{h: h, send: millis(cfg.SendTimeout), drain: millis(cfg.DrainTimeout), logHandle: logHandle}
	if cfg.SendTimeout == 0 {
		c.send = -1
	}
	if cfg.DrainTimeout == 0 {
		c.drain = 5000
	}
	runtime.SetFinalizer(c, (*Client).finalize)
	return c, nil
}

// newConfig makes a C configuration from cfg (options only; the caller frees it), for Open and
// OpenChannels alike.
func newConfig(cfg Config) (C.push_config_t, error) {
	conf := C.push_config_new()
	if conf == nil {
		return nil, newError(StatusNoMemory, "")
	}
	if err := fillConfig(conf, cfg); err != nil {
		C.push_config_free(conf)
		return nil, err
	}
	return conf, nil
}

// fillConfig sets cfg's options on conf.
func fillConfig(conf C.push_config_t, cfg Config) error {
	var e C.push_error
	err := cfg.eachField(func(opt Option, value []byte) error { return setString(conf, opt, value, &e) },
		func(opt Option, value int64) error { return setInt(conf, opt, value, &e) })
	if err != nil {
		return err
	}
	// In a fixed order (by value), so that a configuration error is the same one every run. The
	// order means nothing to the library: a .p12 is opened with its password by Open.
	ordered := make([]Option, 0, len(cfg.Options))
	for opt := range cfg.Options {
		ordered = append(ordered, opt)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i] < ordered[j] })
	for _, opt := range ordered {
		var err error
		switch v := cfg.Options[opt].(type) {
		case string:
			err = setString(conf, opt, []byte(v), &e)
		case []byte:
			err = setString(conf, opt, v, &e)
		case int:
			err = setInt(conf, opt, int64(v), &e)
		case int32:
			err = setInt(conf, opt, int64(v), &e)
		case int64:
			err = setInt(conf, opt, v, &e)
		case uint:
			err = setInt(conf, opt, int64(v), &e)
		case Environment:
			err = setInt(conf, opt, int64(v), &e)
		case time.Duration:
			err = setInt(conf, opt, v.Milliseconds(), &e)
		default:
			err = newError(StatusBadOption, "option "+opt.String()+": unsupported value type")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finalize is the safety net for a Client that was never closed: nothing else can use it now.
func (c *Client) finalize() {
	if c.h != nil {
		C.push_client_close(c.h, 0)
		C.push_client_free(c.h)
		c.h = nil
		c.releaseLog()
	}
}

// releaseLog lets Config.Log go once the C client (its only caller) is freed.
func (c *Client) releaseLog() {
	if c.logHandle != 0 {
		c.logHandle.Delete()
		c.logHandle = 0
	}
}

// WaitConnected waits until a connection to APNs is open, for up to timeout (negative: no
// limit). Errors: ErrTLS (the message says what failed: certificate, host name, ALPN),
// ErrTimeout (with the last connection error), ErrClosed.
func (c *Client) WaitConnected(timeout time.Duration) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.h == nil {
		return newError(StatusClosed, "")
	}
	var e C.push_error
	return errorFrom(C.push_client_wait_connected(c.h, millis(timeout), &e), &e)
}

// Send validates and queues one notification; its Result comes later through Poll or
// Results. Errors: ErrInvalidNotification (and the specific code: ErrBadDeviceToken, ...),
// ErrQueueFull (after Config.SendTimeout), ErrClosed.
func (c *Client) Send(n Notification) error { return c.sendOne(nil, n) }

// sendOne is Send and SendContext (ctx nil: wait for room as Config.SendTimeout says).
func (c *Client) sendOne(ctx context.Context, n Notification) error {
	one := [1]Notification{n}
	p := pack(one[:])
	defer p.free()
	_, err := c.sendPacked(ctx, p, 1)
	return err
}

// batchChunk is how many notifications SendBatch hands to the library per cgo call.
const batchChunk = 4096

// SendBatch queues notifications in order, crossing into the library once per 4096 of them
// (all strings of a chunk are laid out in one C buffer). It returns how many were queued: all
// of them, or those before the first one that is invalid or found no room within
// Config.SendTimeout; the error then describes that one ("notification N: ...", N counted from
// the start of ns).
func (c *Client) SendBatch(ns []Notification) (int, error) { return c.sendBatch(nil, ns) }

// sendBatch is SendBatch and SendBatchContext (ctx nil: wait as Config.SendTimeout says).
func (c *Client) sendBatch(ctx context.Context, ns []Notification) (int, error) {
	done := 0
	for done < len(ns) {
		end := done + batchChunk
		if end > len(ns) {
			end = len(ns)
		}
		n, err := c.sendChunk(ctx, ns[done:end])
		if err != nil {
			if e, ok := err.(*Error); ok && e.Code != StatusQueueFull && e.Code != StatusClosed {
				msg := e.Message
				if strings.HasPrefix(msg, "notification ") {
					if i := strings.Index(msg, ": "); i >= 0 {
						msg = msg[i+2:]
					}
				}
				e.Message = "notification " + strconv.Itoa(done+n) + ": " + msg
			}
			return done + n, err
		}
		done = end
	}
	return done, nil
}

func (c *Client) sendChunk(ctx context.Context, ns []Notification) (int, error) {
	p := pack(ns)
	defer p.free()
	return c.sendPacked(ctx, p, len(ns))
}

// sendPacked queues the count records of p in order and returns how many were queued: the
// one send path of Send, SendBatch and their Context forms. With ctx nil it waits for room
// inside the library for Config.SendTimeout; with a context it never waits inside the library
// (a call there could not be cancelled): on a full queue it waits here until a poll frees room
// (c.room) or ctx is done.
func (c *Client) sendPacked(ctx context.Context, p packed, count int) (int, error) {
	timeout := c.send
	if ctx != nil {
		timeout = 0
	}
	done := 0
	for {
		var room <-chan struct{}
		if ctx != nil {
			room = c.roomSignal() // before trying: a poll racing the try closes this one
		}
		if ctx != nil {
			if until, ok := ctx.Deadline(); ok {
				p.capDeadlines(done, until)
			}
		}
		n, err := c.sendRecords(p, done, count, timeout)
		done += n
		if err == nil || ctx == nil || !errors.Is(err, ErrQueueFull) {
			return done, err
		}
		select {
		case <-ctx.Done():
			return done, ctx.Err()
		case <-room:
		}
	}
}

// sendRecords hands records from..count-1 of p to the library in one call.
func (c *Client) sendRecords(p packed, from, count int, timeout C.int32_t) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.h == nil || c.closing.Load() {
		return 0, newError(StatusClosed, "")
	}
	records := (*C.push_notification)(unsafe.Add(unsafe.Pointer(p.records), from*int(C.sizeof_push_notification)))
	var e C.push_error
	if count-from == 1 { // (its message has no "notification 0: " prefix)
		rc := C.push_client_send(c.h, records, timeout, &e)
		if rc != 0 {
			return 0, errorFrom(rc, &e)
		}
		c.sent.Add(1)
		return 1, nil
	}
	var accepted C.ptrdiff_t
	rc := C.push_client_send_batch(c.h, records, C.ptrdiff_t(count-from), timeout, &accepted, &e)
	c.sent.Add(uint64(accepted))
	return int(accepted), errorFrom(rc, &e)
}

// roomSignal returns the channel the next poll that takes results closes.
func (c *Client) roomSignal() <-chan struct{} {
	c.roomMu.Lock()
	defer c.roomMu.Unlock()
	if c.room == nil {
		c.room = make(chan struct{})
	}
	return c.room
}

// roomFreed wakes the senders waiting for room (results left the library, or the client closes).
func (c *Client) roomFreed() {
	c.roomMu.Lock()
	if c.room != nil {
		close(c.room)
		c.room = nil
	}
	c.roomMu.Unlock()
}

// Poll returns up to max results, waiting up to timeout for the first (0: don't wait;
// negative: no limit). It returns (nil, nil) when none arrived in time, and an error matching
// ErrClosed once the client is closed and every result has been returned.
func (c *Client) Poll(max int, timeout time.Duration) ([]Result, error) {
	if max <= 0 {
		return nil, nil
	}
	if out := c.takeKept(max); out != nil {
		return out, nil
	}
	c.mu.RLock()
	if c.h == nil {
		c.mu.RUnlock()
		return c.pollLeft(max)
	}
	defer c.mu.RUnlock()
	return c.pollC(max, millis(timeout))
}

// pollC is one push_client_poll (c.mu held for reading, c.h open).
func (c *Client) pollC(max int, timeout C.int32_t) ([]Result, error) {
	bufp, _ := c.buffers.Get().(*[]C.push_result)
	if bufp == nil || len(*bufp) < max {
		b := make([]C.push_result, max)
		bufp = &b
	}
	defer c.buffers.Put(bufp)
	buf := *bufp
	var count C.ptrdiff_t
	rc := C.push_client_poll(c.h, &buf[0], C.ptrdiff_t(max), C.ptrdiff_t(C.sizeof_push_result), timeout, &count)
	if count > 0 {
		c.roomFreed()
		return decode(buf[:count]), nil
	}
	if rc != 0 {
		return nil, newError(Status(rc), "")
	}
	return nil, nil
}

func (c *Client) pollLeft(max int) ([]Result, error) {
	c.leftMu.Lock()
	defer c.leftMu.Unlock()
	if len(c.left) == 0 {
		return nil, newError(StatusClosed, "")
	}
	if max > len(c.left) {
		max = len(c.left)
	}
	out := c.left[:max:max]
	c.left = c.left[max:]
	return out, nil
}

// Results returns a channel fed by a goroutine that polls without limit. The channel is closed
// once the client is closed and every result has been delivered. Call it once per consumer
// goroutine set; receive until it is closed.
func (c *Client) Results() <-chan Result {
	ch := make(chan Result, 1024)
	go func() {
		defer close(ch)
		for {
			rs, err := c.Poll(1024, -1)
			for _, r := range rs {
				ch <- r
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// Close stops accepting notifications (later sends fail with ErrClosed), lets those in flight
// finish for up to Config.DrainTimeout, then ends the rest with FAILED results (ReasonCancelled,
// ReasonCancelledInFlight), and frees the C client. Results not yet polled remain available to
// Poll and Results. Idempotent; concurrent calls wait for the first.
func (c *Client) Close() error {
	c.closeWith(c.drain)
	return nil
}

// closeWith is Close with drain milliseconds of drain (CloseContext drains in Go, then 0).
func (c *Client) closeWith(drain C.int32_t) {
	c.closeOnce.Do(func() {
		c.mu.RLock()
		if c.h != nil {
			C.push_client_close(c.h, drain) // wakes blocked sends and polls
		}
		c.mu.RUnlock()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.h == nil {
			return
		}
		buf := make([]C.push_result, 1024)
		for {
			var count C.ptrdiff_t
			rc := C.push_client_poll(c.h, &buf[0], C.ptrdiff_t(len(buf)), C.ptrdiff_t(C.sizeof_push_result), 0, &count)
			left := decode(buf[:count])
			c.leftMu.Lock()
			c.left = append(c.left, left...)
			c.leftMu.Unlock()
			if rc != 0 || count == 0 {
				break
			}
		}
		C.push_client_free(c.h)
		c.h = nil
		c.releaseLog()
		runtime.SetFinalizer(c, nil)
	})
	c.roomFreed() // SendContext calls waiting for room find the client closed
}

// Stats returns a snapshot of the client's counters. After Close it fails with ErrClosed (the
// C client is freed by then).
func (c *Client) Stats() (Stats, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.h == nil {
		return Stats{}, newError(StatusClosed, "")
	}
	var s C.push_stats
	if rc := C.push_client_stats(c.h, &s, C.ptrdiff_t(C.sizeof_push_stats)); rc != 0 {
		return Stats{}, newError(Status(rc), "")
	}
	return statsFrom(&s), nil
}

// cString returns the NUL-terminated text at the start of a C char array.
func cString(p *C.char, capacity int) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(p)), capacity)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cReasonName and cStrerror expose the library's own tables (for the tests that compare them
// with the generated ones).
func cReasonName(r Reason) string { return C.GoString(C.push_reason_name(C.int32_t(r))) }
func cStrerror(s Status) string   { return C.GoString(C.push_strerror(C.int32_t(s))) }
