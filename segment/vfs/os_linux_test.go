package vfs

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestOSPreallocateReservesBlocksKeepingSize(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	f := create(t, NewOS(&syncDriver{}), name)
	defer closeFile(t, f)
	must(t, f.Preallocate(0, 1<<20))
	checkSize(t, f, 0)
	var st syscall.Stat_t
	must(t, syscall.Stat(name, &st))
	if st.Blocks == 0 {
		t.Skip("this file system ignores fallocate (nothing reserved, as documented)")
	}
	if st.Blocks*512 < 1<<20 {
		t.Fatalf("%d bytes reserved, want at least 1 MiB", st.Blocks*512)
	}
}
