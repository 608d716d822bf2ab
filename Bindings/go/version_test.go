package swiftpush

import (
	"os"
	"strings"
	"testing"
)

// TestVersionIsTheReleaseVersion: the constant is the project's VERSION file, and the library
// this test loaded is of the same release.
func TestVersionIsTheReleaseVersion(t *testing.T) {
	file, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(file))
	if Version != want {
		t.Errorf("Version = %q, VERSION says %q", Version, want)
	}
	if got := LibraryVersion(); got != want {
		t.Errorf("LibraryVersion() = %q, VERSION says %q", got, want)
	}
}
