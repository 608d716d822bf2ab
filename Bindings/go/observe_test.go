package swiftpush

import (
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestLogEventsReachConfigLogWithoutSecrets(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	cfg := testConfig(t)
	cfg.LogLevel = LogDebug
	cfg.Log = func(level LogLevel, event, message string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, strings.Join([]string{levelName(level), event, message}, " "))
	}
	c := open(t, cfg)
	if err := c.Send(Notification{Token: testToken, Payload: []byte(testPayload)}); err != nil {
		t.Fatal(err)
	}
	collect(t, c, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(lines, "\n")
	for _, want := range []string{"debug connection.connecting connecting to localhost:", "info connection.ready connection to localhost:"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, testToken) || strings.Contains(all, "bearer") {
		t.Errorf("a secret in the log:\n%s", all)
	}
}

func TestABadLogLevelIsRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.Log = func(LogLevel, string, string) {}
	cfg.LogLevel = 15
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "PUSH_LOG_DEBUG") {
		t.Fatalf("Open with log level 15: %v", err)
	}
}

func TestMetricsHandlerServesPrometheusText(t *testing.T) {
	c := open(t, testConfig(t))
	ns := make([]Notification, 30)
	for i := range ns {
		ns[i] = Notification{Token: testToken, Payload: []byte(testPayload)}
	}
	if _, err := c.SendBatch(ns); err != nil {
		t.Fatal(err)
	}
	collect(t, c, 30)
	w := httptest.NewRecorder()
	c.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Result().Body)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("status %d, content type %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(string(body), `swiftpush_notifications_total{outcome="accepted",reason="None"} 30`+"\n") {
		t.Errorf("metrics:\n%s", body)
	}
	_ = c.Close()
	if _, err := c.MetricsText(); err == nil {
		t.Error("MetricsText after Close: want ErrClosed")
	}
}

func levelName(l LogLevel) string {
	switch l {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarning:
		return "warning"
	default:
		return "error"
	}
}
