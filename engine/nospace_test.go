package engine

import (
	"errors"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// Creating a stream on a full disk is refused with ErrNoSpace, whether the
// catalog cannot be written or the shards' logs cannot be made, and leaves
// nothing: no entry, no files, nothing after a restart.
func TestOnAFullDiskCreatingAStreamIsRefusedAndLeavesNothing(t *testing.T) {
	for _, full := range []string{"/data", "/data/streams"} {
		t.Run(full, func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem)
			e := openEngine(t, efs)
			fillDisk(efs, full)
			_, err := e.CreateStream(sid, StreamConfig{Shards: 2, Durable: true})
			if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("a create on a full disk: %v; want ErrNoSpace", err)
			}
			if got := e.Streams("", ""); len(got) != 0 {
				t.Fatalf("a refused create left %+v", got)
			}
			if names, _ := mem.List(streamDir("/data", sid)); len(names) != 0 {
				t.Fatalf("a refused create left files: %v", names)
			}
			e.Close()
			if got := openEngine(t, mem).Streams("", ""); len(got) != 0 {
				t.Fatalf("a restart finds %+v", got)
			}
		})
	}
}

// Deleting a stream on a full disk succeeds, frees the stream's files, and
// stays deleted after a restart. (The catalog's first try to write its new
// list fails for lack of space; the retry, into the reserve it gave up,
// succeeds: the catalog package holds that on a disk of fixed size.)
func TestOnAFullDiskDeletingAStreamSucceedsAndFreesItsFiles(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	e := openEngine(t, efs)
	s, err := e.CreateStream(sid, StreamConfig{Shards: 2, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := e.Stream(s.ID)
	for i := range 50 {
		publish(t, st, rec(keyFor(t, i%2, 2), i))
	}
	fillDisk(efs, "/data/streams")
	efs.Inject(errorfs.Rule{Op: errorfs.Create, PathContains: "catalog.json.tmp", Nth: 1, Err: syscall.ENOSPC})
	if err := e.DeleteStream(sid); err != nil {
		t.Fatalf("a delete on a full disk: %v", err)
	}
	if efs.Injected() == 0 {
		t.Fatal("nothing failed for lack of space: the test did not fill the disk")
	}
	if _, err := mem.List(streamDir("/data", sid)); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("the deleted stream's files: %v", err)
	}
	e.Close()
	if got := openEngine(t, mem.Crash(vfs.DropUnsynced)).Streams("", ""); len(got) != 0 {
		t.Fatalf("after a crash the deleted stream is back: %+v", got)
	}
}
