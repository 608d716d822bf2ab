package swiftpush

/*
#include <stdlib.h>
#include "swiftpush.h"
*/
import "C"

import (
	"sync"
	"time"
	"unsafe"
)

// StoragePolicy is a broadcast channel's message storage policy, fixed when it is created.
type StoragePolicy int

const (
	// NoMessageStored: a higher publishing budget; broadcasts must use TryOnce (expiration 0).
	NoMessageStored StoragePolicy = C.PUSH_CHANNEL_NO_MESSAGE_STORED
	// MostRecentMessageStored: APNs keeps the last broadcast (up to 8 hours).
	MostRecentMessageStored StoragePolicy = C.PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED
)

// ChannelError is APNs's refusal of a channel management request (errors.Is(err, ErrRejected)):
// the HTTP status, the reason (ReasonChannelNotRegistered, ReasonCannotCreateChannelConfig,
// ReasonFeatureNotEnabled, ...) and the apns-request-id of the answer.
type ChannelError struct {
	Status     int
	Reason     Reason
	ReasonText string
	RequestID  string
	Message    string
}

// Error returns "swiftpush: " and the library's message.
func (e *ChannelError) Error() string { return "swiftpush: " + e.Message }

// Unwrap returns StatusRejected, so that errors.Is(err, ErrRejected) works.
func (e *ChannelError) Unwrap() error { return StatusRejected }

// Channels manages the broadcast channels of apps (iOS 18 Live Activities) on APNs's channel
// management host: create, read, delete and list. Each call is one request and answer, made on
// the calling goroutine; calls take turns. Safe for concurrent use; Close it when done.
type Channels struct {
	mu sync.Mutex
	h  C.push_channels_t
	// Timeout bounds each call (default 30 s; negative: no limit).
	Timeout time.Duration
}

// OpenChannels opens a channel management client with cfg's credentials, CA file, proxy and
// reconnect back-off. host "" means Apple's management host for cfg's APNs host (Host, or the
// environment option); port 0 means Apple's port for Apple's hosts. Nothing is sent until the
// first call. Errors: ErrBadOption (no management host known for cfg), ErrKey, ErrTLS.
func OpenChannels(cfg Config, host string, port int) (*Channels, error) {
	conf, err := newConfig(cfg)
	if err != nil {
		return nil, err
	}
	defer C.push_config_free(conf)
	var chost *C.char
	if host != "" {
		chost = C.CString(host)
		defer C.free(unsafe.Pointer(chost))
	}
	var e C.push_error
	var h C.push_channels_t
	if err := errorFrom(C.push_channels_open(conf, chost, 0, C.int32_t(port), &h, &e), &e); err != nil {
		return nil, err
	}
	return &Channels{h: h, Timeout: 30 * time.Second}, nil
}

// Close closes the connection and releases the client; later calls return ErrClosed.
func (c *Channels) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h != nil {
		C.push_channels_free(c.h)
		c.h = nil
	}
}

// call runs one C call with the bundle id (and channel id) as C strings, turning an APNs
// refusal into a *ChannelError.
func (c *Channels) call(bundleID, channelID string, f func(bundle, channel *C.char, r *C.push_channel_result, e *C.push_error) C.int32_t) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return newError(StatusClosed, "")
	}
	cb := C.CString(bundleID)
	defer C.free(unsafe.Pointer(cb))
	var cc *C.char
	if channelID != "" {
		cc = C.CString(channelID)
		defer C.free(unsafe.Pointer(cc))
	}
	var r C.push_channel_result
	r.struct_size = C.uint32_t(C.sizeof_push_channel_result)
	var e C.push_error
	rc := f(cb, cc, &r, &e)
	if Status(rc) == StatusRejected {
		return &ChannelError{Status: int(r.status), Reason: Reason(r.reason), ReasonText: cString(&r.reason_text[0], len(r.reason_text)),
			RequestID: cString(&r.request_id[0], len(r.request_id)), Message: C.GoString(&e.message[0])}
	}
	return errorFrom(rc, &e)
}

// Create creates a channel for the app bundleID and returns its id (base64). A timeout or a
// lost connection (ErrTimeout, ErrConnect) leaves it unknown whether the channel exists: List
// to see. APNs refusals are *ChannelError (ReasonCannotCreateChannelConfig at 10,000 channels).
func (c *Channels) Create(bundleID string, storage StoragePolicy) (string, error) {
	var id [C.PUSH_CHANNEL_ID_CAPACITY]C.char
	var n C.ptrdiff_t
	err := c.call(bundleID, "", func(b, _ *C.char, r *C.push_channel_result, e *C.push_error) C.int32_t {
		return C.push_channel_create(c.h, b, 0, C.int32_t(storage), &id[0], C.ptrdiff_t(len(id)), &n, r, millis(c.Timeout), e)
	})
	if err != nil {
		return "", err
	}
	return C.GoStringN(&id[0], C.int(n)), nil
}

// Channel reads a channel's storage policy (ReasonChannelNotRegistered once it is deleted).
func (c *Channels) Channel(bundleID, channelID string) (StoragePolicy, error) {
	var policy C.int32_t
	err := c.call(bundleID, channelID, func(b, ch *C.char, r *C.push_channel_result, e *C.push_error) C.int32_t {
		return C.push_channel_read(c.h, b, 0, ch, 0, &policy, r, millis(c.Timeout), e)
	})
	return StoragePolicy(policy), err
}

// Delete deletes a channel; its id is never reused.
func (c *Channels) Delete(bundleID, channelID string) error {
	return c.call(bundleID, channelID, func(b, ch *C.char, r *C.push_channel_result, e *C.push_error) C.int32_t {
		return C.push_channel_delete(c.h, b, 0, ch, 0, r, millis(c.Timeout), e)
	})
}

// List returns the app's channel ids, oldest first.
func (c *Channels) List(bundleID string) ([]string, error) {
	var list *C.push_channel_ids
	err := c.call(bundleID, "", func(b, _ *C.char, r *C.push_channel_result, e *C.push_error) C.int32_t {
		return C.push_channel_list(c.h, b, 0, &list, r, millis(c.Timeout), e)
	})
	if err != nil {
		return nil, err
	}
	defer C.push_channel_ids_free(list)
	ids := make([]string, 0, int(list.count))
	if list.count > 0 {
		for _, p := range unsafe.Slice(list.ids, int(list.count)) {
			ids = append(ids, C.GoString(p))
		}
	}
	return ids, nil
}
