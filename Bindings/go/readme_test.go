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
	if got := strings.Fields(runExample(t, string(m[1]))); strings.Join(got, " ") != "1 ACCEPTED 200" {
		t.Errorf("output %q, want \"1 ACCEPTED 200\"", got)
	}
}

// TestTheReadmeContextExampleRuns runs README.md's "Waiting with a context" program, which
// the project README's Go section shows too.
func TestTheReadmeContextExampleRuns(t *testing.T) {
	testConfig(t) // skips without the mock
	example := readmeBlock(t, "README.md", "Waiting with a context", "go")
	if top := readmeBlock(t, "../../README.md", "Go", "go", "2"); top != example {
		t.Fatal("the project README's second Go example differs from README.md's \"Waiting with a context\"")
	}
	if got := strings.Fields(runExample(t, example)); strings.Join(got, " ") != "1 ACCEPTED 200" {
		t.Errorf("output %q, want \"1 ACCEPTED 200\"", got)
	}
}

// readmeBlock returns a ```lang block of a README section (scripts/readme-block.py).
func readmeBlock(t *testing.T, path, section, lang string, nth ...string) string {
	t.Helper()
	out, err := exec.Command("python3", append([]string{"../../scripts/readme-block.py", path, section, lang}, nth...)...).Output()
	if err != nil {
		t.Fatalf("readme-block.py %s %q: %v", path, section, err)
	}
	return string(out)
}

// runExample builds a README program in a module of its own that points at this one, and
// runs it against the mock (APNS_* variables, its key in the working directory); returns its output.
func runExample(t *testing.T, source string) string {
	t.Helper()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example\n\ngo 1.19\n\nrequire swiftpush.dev/swiftpush v0.0.0\n\nreplace swiftpush.dev/swiftpush => " + here + "\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": source} {
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
	return string(out)
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
