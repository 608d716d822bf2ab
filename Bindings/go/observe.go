package swiftpush

/*
#include <stdint.h>
#include "swiftpush.h"
int32_t swiftpush_go_set_log_callback(push_config_t config, uintptr_t handle, int32_t min_level, push_error *err);
*/
import "C"

import (
	"net/http"
	"runtime/cgo"
	"unsafe"
)

// LogLevel is the severity of a library log event (the C ABI's PUSH_LOG_*).
type LogLevel int32

// The levels, lowest first.
const (
	LogDebug   LogLevel = 10 // detail: each connection attempt
	LogInfo    LogLevel = 20 // connections ready, closed, retired; provider tokens signed
	LogWarning LogLevel = 30 // refusals and the reconnect back-off they cause; slow callbacks
	LogError   LogLevel = 40 // TLS failures, HTTP/2 protocol errors
)

// LogFunc receives the library's log events (Config.Log): the level, a stable event name such
// as "connection.ready" or "reconnect.scheduled", and a message for people that never holds key
// material, tokens or payloads. It is called on the library's I/O thread: keep it short. With
// Go 1.21's log/slog, for example:
//
//	Log: func(l swiftpush.LogLevel, event, msg string) {
//		slog.Log(context.Background(), slog.Level((l-20)/10*4), msg, "event", event)
//	}
type LogFunc func(level LogLevel, event, message string)

//export swiftpushGoLog
func swiftpushGoLog(userData unsafe.Pointer, level C.int32_t, event *C.char, message *C.char) {
	f := cgo.Handle(uintptr(userData)).Value().(LogFunc)
	f(LogLevel(level), C.GoString(event), C.GoString(message))
}

// setLogCallback installs f for events of minLevel and above; the returned handle keeps f
// reachable from C and must be deleted once the C client is freed.
func setLogCallback(conf C.push_config_t, f LogFunc, minLevel LogLevel, e *C.push_error) (cgo.Handle, error) {
	if minLevel == 0 {
		minLevel = LogInfo
	}
	h := cgo.NewHandle(f)
	if err := errorFrom(C.swiftpush_go_set_log_callback(conf, C.uintptr_t(h), C.int32_t(minLevel), e), e); err != nil {
		h.Delete()
		return 0, err
	}
	return h, nil
}

// MetricsText returns the client's counters in the Prometheus text exposition format
// (push_client_metrics_text): outcomes by reason, writes, retries, GOAWAYs, connections, queue
// gauges and an answer-latency histogram. After Close it fails with ErrClosed.
func (c *Client) MetricsText() (string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.h == nil {
		return "", newError(StatusClosed, "")
	}
	var e C.push_error
	var length C.ptrdiff_t
	for {
		if err := errorFrom(C.push_client_metrics_text(c.h, nil, 0, &length, &e), &e); err != nil {
			return "", err
		}
		buf := make([]byte, int(length)+256) // room for counters that grow meanwhile
		rc := C.push_client_metrics_text(c.h, (*C.char)(unsafe.Pointer(&buf[0])), C.ptrdiff_t(len(buf)), &length, &e)
		if Status(rc) == StatusBufferTooSmall {
			continue
		}
		if err := errorFrom(rc, &e); err != nil {
			return "", err
		}
		return string(buf[:length]), nil
	}
}

// MetricsHandler serves MetricsText on an HTTP endpoint (mount it at /metrics for Prometheus).
func (c *Client) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text, err := c.MetricsText()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(text))
	})
}
