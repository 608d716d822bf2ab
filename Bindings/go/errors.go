package swiftpush

import "errors"

// Error is a failure reported by the library: the status code and the library's message,
// which names what was wrong ("device token has an odd number of hex digits (7)").
//
// errors.Is(err, ErrQueueFull) (or any Err* sentinel) matches the code;
// errors.Is(err, ErrInvalidNotification) matches every validation code;
// errors.As(err, &e) with e *Error gives the code and the message.
type Error struct {
	Code    Status
	Message string
}

// Error returns "swiftpush: " and the library's message.
func (e *Error) Error() string { return "swiftpush: " + e.Message }

// Unwrap returns the status code, so that errors.Is(err, ErrClosed) and friends work.
func (e *Error) Unwrap() error { return e.Code }

// ErrInvalidNotification matches (with errors.Is) every error that refuses one notification as
// invalid: bad device token, topic, push type, priority, payload, size, collapse id, apns-id
// or expiration. Such a notification gets no Result.
var ErrInvalidNotification = errors.New("swiftpush: invalid notification")

// Error makes every non-OK Status usable as an error (the sentinels ErrQueueFull, ... are
// Status values).
func (s Status) Error() string { return "swiftpush: " + s.Message() }

// Is reports whether s is a validation code when asked about ErrInvalidNotification.
func (s Status) Is(target error) bool {
	return target == ErrInvalidNotification && s.IsValidation()
}

func newError(code Status, message string) *Error {
	if message == "" {
		message = code.Message()
	}
	return &Error{Code: code, Message: message}
}
