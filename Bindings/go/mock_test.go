package swiftpush

// The test harness: the test PKI and two mock APNs servers, started once for the package.
// Nothing is built here; the environment names what to use:
//
//	SWIFTPUSH_CLI  the swiftpush-cli executable, which runs the mock (tests skip without it)
//	SWIFTPUSH_PKI  a directory made by scripts/make-test-pki.sh (made in a temporary directory when unset)
//	SWIFTPUSH_MOCK_PORT  instead of starting mocks, use a mock already listening on this port
//	               (with SWIFTPUSH_PKI; Bindings/bench.sh pins one to its own core this way)
//
// and the library comes through pkg-config: PKG_CONFIG_PATH=$(scripts/dev-pkgconfig.sh $DIR).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	testToken   = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
	testTopic   = "com.example.app"
	testPayload = `{"aps":{"alert":{"title":"Hi","body":"café ☃"}}}`
)

var (
	pkiDir        string
	trustedPort   int
	untrustedPort int
	mockSkip      string // why the mock tests are skipped, if they are
)

type mockServer struct {
	cmd *exec.Cmd
	log string
}

func startMock(cli, pki, dir, name, cert string, extra ...string) (*mockServer, int, error) {
	portFile := filepath.Join(dir, name+".port")
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	defer logFile.Close()
	args := append([]string{"mock", "--cert", filepath.Join(pki, cert+".pem"), "--key", filepath.Join(pki, cert+".key"),
		"--port", "0", "--key-id", "TESTKEY001", "--team-id", "TEAM123456",
		"--auth-key", filepath.Join(pki, "AuthKey_TESTKEY001.pub.pem"), "--port-file", portFile}, extra...)
	cmd := exec.Command(cli, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	m := &mockServer{cmd: cmd, log: logPath}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(portFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			port, err := strconv.Atoi(strings.TrimSpace(string(b)))
			return m, port, err
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			return nil, 0, fmt.Errorf("mock %s exited: %s", name, b)
		default:
		}
		if time.Now().After(deadline) {
			m.stop()
			return nil, 0, fmt.Errorf("mock %s did not start", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (m *mockServer) stop() {
	if m != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
	}
}

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	if port := os.Getenv("SWIFTPUSH_MOCK_PORT"); port != "" {
		var err error
		if trustedPort, err = strconv.Atoi(port); err != nil || os.Getenv("SWIFTPUSH_PKI") == "" {
			fmt.Fprintln(os.Stderr, "SWIFTPUSH_MOCK_PORT needs a port number and SWIFTPUSH_PKI")
			return 1
		}
		pkiDir = os.Getenv("SWIFTPUSH_PKI")
		return m.Run()
	}
	cli := os.Getenv("SWIFTPUSH_CLI")
	if cli == "" {
		mockSkip = "SWIFTPUSH_CLI is not set (the swiftpush-cli executable that runs the mock APNs server)"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "swiftpush-go-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pkiDir = os.Getenv("SWIFTPUSH_PKI")
	if pkiDir == "" {
		pkiDir = filepath.Join(dir, "pki")
		out, err := exec.Command("bash", "../../scripts/make-test-pki.sh", pkiDir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "make-test-pki.sh: %v\n%s", err, out)
			return 1
		}
	}
	trusted, port, err := startMock(cli, pkiDir, dir, "trusted", "server")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer trusted.stop()
	trustedPort = port
	untrusted, port, err := startMock(cli, pkiDir, dir, "untrusted", "untrusted-server")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer untrusted.stop()
	untrustedPort = port
	return m.Run()
}

// testConfig is a configuration for the trusted mock: token auth, a default topic.
func testConfig(tb testing.TB) Config {
	tb.Helper()
	if mockSkip != "" {
		tb.Skip(mockSkip)
	}
	return Config{Host: "localhost", Port: trustedPort, CAFile: filepath.Join(pkiDir, "ca.pem"),
		KeyFile: filepath.Join(pkiDir, "AuthKey_TESTKEY001.p8"), KeyID: "TESTKEY001", TeamID: "TEAM123456",
		Topic: testTopic}
}

// open opens a client with cfg and closes it when the test ends.
func open(tb testing.TB, cfg Config) *Client {
	tb.Helper()
	c, err := Open(cfg)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// collect polls until n results arrived, or none came for 20 s.
func collect(tb testing.TB, c *Client, n int) []Result {
	tb.Helper()
	var out []Result
	for len(out) < n {
		rs, err := c.Poll(n-len(out), 20*time.Second)
		if err != nil {
			tb.Fatalf("Poll: %v (after %d of %d results)", err, len(out), n)
		}
		if len(rs) == 0 {
			tb.Fatalf("no result for 20 s (after %d of %d)", len(out), n)
		}
		out = append(out, rs...)
	}
	return out
}
