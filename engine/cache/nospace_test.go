package cache

import (
	"errors"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/catalog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// Creating a durable cache on a full disk is refused for lack of space
// (the catalog's or the logs'), leaving nothing; dropping one on a full
// disk succeeds and removes its files.
func TestOnAFullDiskACacheCreateIsRefusedAndADropSucceeds(t *testing.T) {
	for _, full := range []string{"/data", "/data/caches/acme"} {
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem)
		s := openStore(t, testOptions(efs, nil))
		if _, err := s.Create(ID{Tenant: "acme", Namespace: "app", Name: "kept"}, Config{Durable: true}); err != nil {
			t.Fatal(err)
		}
		for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate} {
			efs.Inject(errorfs.Rule{Op: op, PathContains: full, Err: syscall.ENOSPC})
		}
		_, err := s.Create(cid, Config{Durable: true, Shards: 2})
		if !errors.Is(err, engine.ErrNoSpace) && !errors.Is(err, catalog.ErrNoSpace) {
			t.Fatalf("full %s: a create: %v; want ErrNoSpace", full, err)
		}
		if _, err := mem.List(cacheDir("/data", cid)); !errors.Is(err, vfs.ErrNotExist) {
			t.Fatalf("full %s: a refused create left files: %v", full, err)
		}
		// The disk stays full for everything but the catalog's write into
		// the reserve it gives up (a disk of fixed size: package catalog).
		efs.Clear()
		efs.Inject(errorfs.Rule{Op: errorfs.Create, PathContains: "catalog.json.tmp", Nth: 1, Err: syscall.ENOSPC})
		efs.Inject(errorfs.Rule{Op: errorfs.Create, PathContains: "/data/caches/acme", Err: syscall.ENOSPC})
		if err := s.Drop(ID{Tenant: "acme", Namespace: "app", Name: "kept"}); err != nil {
			t.Fatalf("full %s: a drop: %v", full, err)
		}
		s.Close()
		efs.Clear()
		if got := openStore(t, testOptions(mem, nil)).List("", ""); len(got) != 0 {
			t.Fatalf("full %s: after a restart: %+v", full, got)
		}
	}
}
