package replica

import (
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// A replica may have lost what it never fsynced only when its machine
// booted again since it last ran and it did not stop cleanly: a process
// crash (the same boot) keeps the page cache; a clean stop synced all.
func TestAReplicaKnowsWhenItsLastStopMayHaveLostItsTail(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/log"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		what      string
		boot      string
		cleanStop bool // MarkCleanStop before this open
		lost      bool
	}{
		{"a new replica", "boot-1", false, false},
		{"a process crash: the same boot", "boot-1", false, false},
		{"a power cut: another boot, no clean stop", "boot-2", false, true},
		{"a clean stop, then a reboot", "boot-3", true, false},
		{"the marker is gone once opened: a power cut after it", "boot-4", false, true},
		{"no boot id to read: taken as a process crash", "", false, false},
	}
	for _, st := range steps {
		if st.cleanStop {
			if err := MarkCleanStop(fs, "/log"); err != nil {
				t.Fatal(err)
			}
		}
		lost, err := openStopState(fs, "/log", st.boot)
		if err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if lost != st.lost {
			t.Fatalf("%s: lost %v, want %v", st.what, lost, st.lost)
		}
	}
}
