package swiftpush

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestTheReadmeExampleRuns builds the program in README.md as written, in a module of its own
// that points at this one, and runs it against the mock.
func TestTheReadmeExampleRuns(t *testing.T) {
	testConfig(t) // skips without the mock
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```go block")
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example\n\ngo 1.19\n\nrequire swiftpush.dev/swiftpush v0.0.0\n\nreplace swiftpush.dev/swiftpush => " + here + "\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": string(m[1])} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key, err := os.ReadFile(filepath.Join(pkiDir, "AuthKey_TESTKEY001.p8"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "AuthKey_TESTKEY001.p8"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "APNS_HOST=localhost", "APNS_PORT="+strconv.Itoa(trustedPort),
		"APNS_CA_FILE="+filepath.Join(pkiDir, "ca.pem"), "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got := strings.Fields(string(out)); strings.Join(got, " ") != "1 ACCEPTED 200" {
		t.Errorf("output %q, want \"1 ACCEPTED 200\"", out)
	}
}

// TestTheTopLevelReadmeShowsThisSameExample keeps the project README's Go example identical to
// the one TestTheReadmeExampleRuns runs.
func TestTheTopLevelReadmeShowsThisSameExample(t *testing.T) {
	block := func(path string) string {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(text)
		i := strings.Index(s, "```go\n")
		if i < 0 {
			t.Fatalf("%s has no ```go block", path)
		}
		s = s[i+len("```go\n"):]
		return s[:strings.Index(s, "```")]
	}
	if block("README.md") != block("../../README.md") {
		t.Fatal("README.md's Go example differs from Bindings/go/README.md's")
	}
}
