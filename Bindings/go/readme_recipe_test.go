package swiftpush

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestTheReadmeCheckoutRecipesBuild runs each ```sh block of README.md's "Using the binding from
// a checkout", as written, in a throwaway module outside the checkout whose program imports this
// package (SWIFTPUSH naming the checkout, as the README says), then runs the program: it must
// print this package's Version and the loaded library's.
func TestTheReadmeCheckoutRecipesBuild(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Using the binding from a checkout\n")
	if start < 0 {
		t.Fatal(`README.md has no "## Using the binding from a checkout" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 2 {
		t.Fatalf("the section has %d ```sh blocks, want 2 (replace, go.work)", len(blocks))
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin")
	// The caller's Go settings, less those that would pick the module mode for the recipe.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "SWIFTPUSH="+checkout, "PATH="+goBin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOPROXY=off")
	program := "package main\n\nimport (\n\t\"fmt\"\n\n\t\"swiftpush.dev/swiftpush\"\n)\n\n" +
		"func main() { fmt.Println(swiftpush.Version, swiftpush.LibraryVersion()) }\n"
	for i, block := range blocks {
		dir := t.TempDir()
		if strings.HasPrefix(dir, checkout+string(filepath.Separator)) {
			t.Fatalf("%s is inside the checkout", dir)
		}
		files := map[string]string{"go.mod": "module example\n\ngo 1.19\n", "main.go": program}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run := func(name string, args ...string) string {
			cmd := exec.Command(name, args...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("recipe %d: %s %s: %v\n%s", i+1, name, strings.Join(args, " "), err, out)
			}
			return string(out)
		}
		run("bash", "-euo", "pipefail", "-c", block[1])
		if got, want := strings.Fields(run("go", "run", ".")), []string{Version, LibraryVersion()}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("recipe %d: the program printed %q, want %q", i+1, got, want)
		}
	}
}
