package swiftpush

/*
#include <stdlib.h>
#include "swiftpush.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"unsafe"
)

// Payload builds an APNs payload with the library's builder: "aps" with its keys in Apple's
// order, then the custom keys; validated (size for the push type, Live Activity events, loc
// keys) and escaped by the library.
//
//	p := swiftpush.NewPayload()
//	p.Set(swiftpush.PayloadAlertTitle, "Hello")
//	p.Set(swiftpush.PayloadBadge, 3)
//	p.SetCustom("order", map[string]int{"id": 42})
//	body, err := p.Build()
//
// Methods are safe for concurrent use; Free (or the finalizer) releases the C payload.
type Payload struct {
	mu sync.RWMutex // every C call holds it for reading; Free takes it to release h
	h  C.push_payload_t
}

// NewPayload returns an empty payload ({"aps":{}} when built).
func NewPayload() *Payload {
	h := C.push_payload_new()
	if h == nil {
		panic("swiftpush: out of memory")
	}
	p := &Payload{h: h}
	runtime.SetFinalizer(p, (*Payload).Free)
	return p
}

// Free releases the C payload. Idempotent; later calls fail with ErrInvalidArgument.
func (p *Payload) Free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.h != nil {
		C.push_payload_free(p.h)
		p.h = nil
		runtime.SetFinalizer(p, nil)
	}
}

// call runs f with the handle under the read lock, turning its status into an error.
func (p *Payload) call(f func(h C.push_payload_t, e *C.push_error) C.int32_t) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.h == nil {
		return newError(StatusInvalidArgument, "the payload was freed")
	}
	var e C.push_error
	return errorFrom(f(p.h, &e), &e)
}

// cBytes returns a C copy of s (NUL-terminated) and its length; free it with C.free.
func cBytes(s []byte) (*C.char, C.ptrdiff_t) {
	return (*C.char)(C.CBytes(append(s[:len(s):len(s)], 0))), C.ptrdiff_t(len(s))
}

// Set sets a field with the setter its kind calls for: a string for string fields, an integer
// for int fields (PayloadBadge, PayloadTimestamp, PayloadPushType, ...), a float64 for
// PayloadRelevanceScore, JSON for raw fields (PayloadContentState, PayloadAttributes: a
// json.RawMessage or []byte is copied as it is, any other value is marshalled), and a []string
// for the loc-args lists. A nil value removes the field.
func (p *Payload) Set(field PayloadField, value interface{}) error {
	if value == nil {
		return p.Clear(field)
	}
	switch field.kind() {
	case "string":
		s, ok := value.(string)
		if !ok {
			return newError(StatusInvalidArgument, "payload field "+strconv.Itoa(int(field))+" takes a string")
		}
		cs, n := cBytes([]byte(s))
		defer C.free(unsafe.Pointer(cs))
		return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
			return C.push_payload_set_string(h, C.int32_t(field), cs, n, e)
		})
	case "int":
		var v int64
		switch x := value.(type) {
		case int:
			v = int64(x)
		case int64:
			v = x
		case int32:
			v = int64(x)
		case PushType:
			v = int64(x)
		default:
			return newError(StatusInvalidArgument, "payload field "+strconv.Itoa(int(field))+" takes an integer")
		}
		return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
			return C.push_payload_set_int(h, C.int32_t(field), C.int64_t(v), e)
		})
	case "double":
		v, ok := value.(float64)
		if !ok {
			return newError(StatusInvalidArgument, "payload field "+strconv.Itoa(int(field))+" takes a float64")
		}
		return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
			return C.push_payload_set_double(h, C.int32_t(field), C.double(v), e)
		})
	case "raw":
		raw, err := jsonBytes(value)
		if err != nil {
			return err
		}
		cs, n := cBytes(raw)
		defer C.free(unsafe.Pointer(cs))
		return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
			return C.push_payload_set_raw(h, C.int32_t(field), cs, n, e)
		})
	case "loc_arg":
		args, ok := value.([]string)
		if !ok {
			return newError(StatusInvalidArgument, "payload field "+strconv.Itoa(int(field))+" takes a []string")
		}
		if err := p.Clear(field); err != nil {
			return err
		}
		for _, a := range args {
			if err := p.AddLocArg(field, a); err != nil {
				return err
			}
		}
		return nil
	}
	return newError(StatusInvalidArgument, "unknown payload field "+strconv.Itoa(int(field)))
}

func jsonBytes(value interface{}) ([]byte, error) {
	switch v := value.(type) {
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, newError(StatusBadPayload, err.Error())
	}
	return b, nil
}

// AddLocArg appends one argument to a loc-args list (PayloadAlertLocArgs, ...).
func (p *Payload) AddLocArg(list PayloadField, value string) error {
	cs, n := cBytes([]byte(value))
	defer C.free(unsafe.Pointer(cs))
	return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
		return C.push_payload_add_loc_arg(h, C.int32_t(list), cs, n, e)
	})
}

// SetCriticalSound sets aps.sound to a critical alert sound (volume 0 to 1).
func (p *Payload) SetCriticalSound(name string, volume float64) error {
	cs, n := cBytes([]byte(name))
	defer C.free(unsafe.Pointer(cs))
	return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
		return C.push_payload_set_critical_sound(h, cs, n, C.double(volume), e)
	})
}

// SetCustom adds a custom top-level key beside "aps": a json.RawMessage or []byte is copied as
// it is, any other value is marshalled.
func (p *Payload) SetCustom(key string, value interface{}) error {
	raw, err := jsonBytes(value)
	if err != nil {
		return err
	}
	ck, kn := cBytes([]byte(key))
	defer C.free(unsafe.Pointer(ck))
	cv, vn := cBytes(raw)
	defer C.free(unsafe.Pointer(cv))
	return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
		return C.push_payload_set_custom(h, ck, kn, cv, vn, e)
	})
}

// Clear removes a field.
func (p *Payload) Clear(field PayloadField) error {
	return p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
		return C.push_payload_clear(h, C.int32_t(field), e)
	})
}

// Build returns the payload's JSON. Errors: ErrPayloadTooLarge (over the limit of the push
// type set with PayloadPushType), ErrBadPayload.
func (p *Payload) Build() ([]byte, error) {
	size := 512
	for {
		buf := C.malloc(C.size_t(size))
		var length C.ptrdiff_t
		err := p.call(func(h C.push_payload_t, e *C.push_error) C.int32_t {
			return C.push_payload_build(h, (*C.char)(buf), C.ptrdiff_t(size), &length, e)
		})
		if err == nil {
			out := C.GoBytes(buf, C.int(length))
			C.free(buf)
			return out, nil
		}
		C.free(buf)
		if e, ok := err.(*Error); ok && e.Code == StatusBufferTooSmall {
			size = int(length) + 1
			continue
		}
		return nil, err
	}
}

// TopicFor returns the apns-topic for an app's bundle id and a push type: the bundle id plus
// the push type's suffix (".voip", ".push-type.liveactivity", ...).
func TopicFor(bundleID string, t PushType) (string, error) {
	cs, n := cBytes([]byte(bundleID))
	defer C.free(unsafe.Pointer(cs))
	capacity := len(bundleID) + 64
	buf := C.malloc(C.size_t(capacity))
	defer C.free(buf)
	var length C.ptrdiff_t
	var e C.push_error
	rc := C.push_topic_for(cs, n, C.int32_t(t), (*C.char)(buf), C.ptrdiff_t(capacity), &length, &e)
	if err := errorFrom(rc, &e); err != nil {
		return "", err
	}
	return C.GoStringN((*C.char)(buf), C.int(length)), nil
}
