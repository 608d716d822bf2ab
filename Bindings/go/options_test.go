package swiftpush

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The Option kinds and ranges generated from Tables/options.tsv agree with the library, which
// checks the same table: each integer option takes its bounds and refuses one past them.
// (Open has no credentials here, so an accepted value ends in ErrKey at push_client_open.)
func TestOptionRangesFromTheTableMatchTheLibrary(t *testing.T) {
	checked := 0
	for _, opt := range allOptions {
		lowest, highest, ok := opt.Range()
		if !ok {
			if !opt.IsString() {
				t.Errorf("%v: an integer option without a range", opt)
			}
			continue
		}
		for _, v := range []int64{lowest - 1, highest + 1} {
			_, err := Open(Config{Options: map[Option]interface{}{opt: v}})
			if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), strconv.FormatInt(v, 10)) {
				t.Errorf("%v = %d: %v, want ErrBadOption naming the value", opt, v, err)
			}
		}
		for _, v := range []int64{lowest, highest} {
			if _, err := Open(Config{Options: map[Option]interface{}{opt: v}}); !errors.Is(err, ErrKey) {
				t.Errorf("%v = %d: %v, want the value accepted (then ErrKey: no credentials)", opt, v, err)
			}
		}
		checked++
	}
	if checked != 17 {
		t.Errorf("%d integer options checked, want 17", checked)
	}
}
