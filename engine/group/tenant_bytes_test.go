package group

import (
	"testing"
)

// A tenant's group bytes are its shards' cursor and dead-letter logs:
// counted from the open logs, and from the files on disk for a shard whose
// groups no operation has opened since a restart; never another tenant's.
func TestTenantBytesCountTheGroupLogs(t *testing.T) {
	f := newFixture(t, Options{})
	if n := f.m.TenantBytes("acme"); n != 0 {
		t.Fatalf("before any group: %d", n)
	}
	f.publish(4)
	last := f.poll("g", "c1", 4)
	if err := f.m.Reject(key("g"), "c1", offsets(last), "bad"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	sh, _ := f.stream.Shard(0)
	sg := f.m.shards[sh]
	for _, l := range []*groupLog{sg.cursors, sg.deadLog} {
		if err := l.log().Sync(); err != nil { // a cursor record nobody waits for may still be on its way
			t.Fatal(err)
		}
	}
	open := f.m.TenantBytes("acme")
	if want := sg.cursors.log().Stats().Bytes + sg.deadLog.log().Stats().Bytes; open != want || sg.deadLog.log().Stats().Records == 0 {
		t.Fatalf("open groups: %d, the two logs hold %d", open, want)
	}
	if n := f.m.TenantBytes("globex"); n != 0 {
		t.Fatalf("another tenant: %d", n)
	}
	f.restart()
	// MemFS does not grow a file when it is preallocated: the files on
	// disk hold exactly what the logs held.
	if n := f.m.TenantBytes("acme"); n != open {
		t.Fatalf("groups not opened since the restart: %d, %d before it", n, open)
	}
	f.describe("g") // opens the shard's groups
	if n := f.m.TenantBytes("acme"); n != open {
		t.Fatalf("groups opened again: %d, %d before the restart", n, open)
	}
}
