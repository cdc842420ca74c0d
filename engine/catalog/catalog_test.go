package catalog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

type thing struct {
	Name string `json:"name"`
	Size int    `json:"size"`
}

func (t thing) CatalogKey() string  { return t.Name }
func (t thing) CatalogName() string { return t.Name }

var (
	errExists   = errors.New("exists")
	errNotFound = errors.New("not found")
	format      = Format{File: "things.json", Field: "things", Version: 1, ErrExists: errExists, ErrNotFound: errNotFound}
)

func open(t *testing.T, fs vfs.FS) *File[string, thing] {
	t.Helper()
	c, err := Open[string, thing](fs, "/data", format)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestACatalogRoundTripsThroughItsFile(t *testing.T) {
	fs := vfs.NewMem()
	c := open(t, fs)
	for _, n := range []string{"b", "a", "c"} {
		if err := c.Create(thing{Name: n, Size: len(n)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(thing{Name: "a"}); !errors.Is(err, errExists) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := c.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("b"); !errors.Is(err, errNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	c2 := open(t, fs.Crash(vfs.DropUnsynced))
	list := c2.List()
	if len(list) != 2 || list[0].Name != "a" || list[1].Name != "c" {
		t.Fatalf("after a crash: %+v", list)
	}
	if got, ok := c2.Get("c"); !ok || got.Size != 1 {
		t.Fatalf("get: %+v %v", got, ok)
	}
}

// A crash at any step of a save leaves the old list or the new one.
func TestACrashDuringASaveLeavesTheOldOrTheNewList(t *testing.T) {
	for n := 1; ; n++ {
		fs := vfs.NewMem()
		c := open(t, fs)
		c.Create(thing{Name: "old"})
		fs.SetCrashAfter(n, vfs.DropUnsynced)
		err := c.Create(thing{Name: "new"})
		if !fs.Crashed() {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		got := open(t, fs.CrashImage()).List()
		if len(got) != 1 && len(got) != 2 || got[0].Name != "new" && got[0].Name != "old" {
			t.Fatalf("crash after mutation %d: %+v", n, got)
		}
	}
}

func TestAFileOfAnotherVersionOrDamagedIsRefused(t *testing.T) {
	for _, content := range []string{`{"version": 2, "things": []}`, `{"version": 1, "things": {`, `not json`} {
		fs := vfs.NewMem()
		fs.MkdirAll("/data")
		if err := vfs.WriteFileAtomic(fs, "/data", "things.json", []byte(content)); err != nil {
			t.Fatal(err)
		}
		if _, err := Open[string, thing](fs, "/data", format); err == nil {
			t.Fatalf("%q was accepted", content)
		}
	}
	if _, err := vfs.ReadFile(vfs.NewMem(), filepath.Join("/nope", "x")); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("read of a missing file: %v", err)
	}
}

func TestADamagedVersionIsReportedAsDamagedNotAsVersionZero(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("/data")
	if err := vfs.WriteFileAtomic(fs, "/data", "things.json", []byte(`{"version": "one", "things": []}`)); err != nil {
		t.Fatal(err)
	}
	_, err := Open[string, thing](fs, "/data", format)
	if err == nil || !strings.Contains(err.Error(), "damaged") || strings.Contains(err.Error(), "version 0") {
		t.Fatalf("a damaged version field: %v", err)
	}
}

func TestWithoutAnFSTheCatalogLivesInMemory(t *testing.T) {
	c, err := Open[string, thing](nil, "", format)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(thing{Name: "x"}); err != nil || len(c.List()) != 1 {
		t.Fatalf("%v %v", err, c.List())
	}
}
