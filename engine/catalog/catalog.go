// Package catalog keeps a broker's list of named things (streams, caches) as
// one JSON file in its data directory, replaced atomically on every change:
// write a temporary file, sync it, rename it over the old one, sync the
// directory. A crash leaves the old list or the new one, never a mix.
//
// It must never change its file format without a new version number, and
// never return an entry it failed to make durable.
//
// The file is {"version": N, "<kind>": [entries...]}, sorted by name.
// Safe for concurrent use.
//
// A full disk never keeps an entry from being deleted: deleting is how an
// operator frees space, yet writing the new list takes new blocks before
// the rename gives the old ones back. So beside the file lies a reserve
// (reserve.go), zeros that only a Delete gives up, to write into when the
// disk is full; a Create takes it back first and is refused with
// ErrNoSpace, changing nothing, when it cannot. A failure for lack of
// space always matches ErrNoSpace and leaves the list as it was.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/felixbroker/felix/segment/vfs"
)

// ErrNoSpace matches a Create or Delete refused for lack of disk space:
// the catalog, on disk and in memory, is as it was.
var ErrNoSpace = errors.New("felix/catalog: no space left on the device")

// Entry is what a catalog holds: a value that knows its key and its name
// (the name orders the list).
type Entry[K comparable] interface {
	CatalogKey() K
	CatalogName() string
}

// Format names the file and its contents.
type Format struct {
	File        string // file name in the directory, e.g. "catalog.json"
	Field       string // the JSON field holding the entries, e.g. "streams"
	Version     int    // format version; a file of another version is refused
	ErrExists   error  // returned by Create for a taken key
	ErrNotFound error  // returned by Delete for a missing key
}

// File is a catalog kept in a file (or, with a nil FS, in memory only).
type File[K comparable, E Entry[K]] struct {
	fs     vfs.FS
	dir    string
	format Format

	mu      sync.Mutex
	entries map[K]E
}

// Open loads the catalog in dir, or starts an empty one.
func Open[K comparable, E Entry[K]](fs vfs.FS, dir string, format Format) (*File[K, E], error) {
	c := &File[K, E]{fs: fs, dir: dir, format: format, entries: map[K]E{}}
	if fs == nil {
		return c, nil
	}
	if err := fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("felix/catalog: %w", err)
	}
	path := filepath.Join(dir, format.File)
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, vfs.ErrNotExist) {
		_ = c.takeReserve(0)
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("felix/catalog: reading %s: %w", path, err)
	}
	var doc map[string]json.RawMessage
	var version int
	var list []E
	err = json.Unmarshal(b, &doc)
	if err == nil {
		err = json.Unmarshal(doc["version"], &version)
	}
	if err != nil {
		return nil, fmt.Errorf("felix/catalog: %s is damaged: %w", path, err)
	}
	if version != format.Version {
		return nil, fmt.Errorf("felix/catalog: %s is version %d, this broker reads %d", path, version, format.Version)
	}
	if raw, ok := doc[format.Field]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("felix/catalog: %s is damaged: %w", path, err)
		}
	}
	for _, e := range list {
		c.entries[e.CatalogKey()] = e
	}
	_ = c.takeReserve(len(b)) // best effort: a full disk at start leaves Deletes without it
	return c, nil
}

// Create adds e, durably; Format.ErrExists when its key is taken.
func (c *File[K, E]) Create(e E) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := e.CatalogKey()
	if _, ok := c.entries[k]; ok {
		return c.format.ErrExists
	}
	c.entries[k] = e
	if err := c.saveCreate(); err != nil {
		delete(c.entries, k)
		return err
	}
	return nil
}

// Delete removes the entry with key k, durably; Format.ErrNotFound when
// there is none.
func (c *File[K, E]) Delete(k K) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[k]
	if !ok {
		return c.format.ErrNotFound
	}
	delete(c.entries, k)
	if err := c.saveDelete(); err != nil {
		c.entries[k] = old
		return err
	}
	return nil
}

// Get returns the entry with key k.
func (c *File[K, E]) Get(k K) (E, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e, ok
}

// List returns every entry, sorted by name.
func (c *File[K, E]) List() []E {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sorted()
}

func (c *File[K, E]) sorted() []E {
	out := make([]E, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CatalogName() < out[j].CatalogName() })
	return out
}

// saveCreate writes the catalog with an entry added, once the reserve
// covers it: the space a Delete may need is never spent on a Create.
// Called with mu held.
func (c *File[K, E]) saveCreate() error {
	if c.fs == nil {
		return nil
	}
	b, err := c.encode()
	if err != nil {
		return err
	}
	if err := c.takeReserve(len(b)); err != nil {
		return err
	}
	return c.write(b)
}

// saveDelete writes the catalog with an entry removed, giving up the
// reserve to do it when the disk is full. Called with mu held.
func (c *File[K, E]) saveDelete() error {
	if c.fs == nil {
		return nil
	}
	b, err := c.encode()
	if err != nil {
		return err
	}
	err = c.write(b)
	if errors.Is(err, ErrNoSpace) && c.giveUpReserve() {
		err = c.write(b)
	}
	if err == nil {
		_ = c.takeReserve(len(b)) // best effort: the caller frees space only now
	}
	return err
}

// encode is the whole catalog as its file holds it; called with mu held.
func (c *File[K, E]) encode() ([]byte, error) {
	list, err := json.Marshal(c.sorted())
	if err != nil {
		return nil, err
	}
	version, _ := json.Marshal(c.format.Version)
	return json.MarshalIndent(map[string]json.RawMessage{"version": version, c.format.Field: list}, "", "  ")
}

// write replaces the file with b, durably and atomically. A failure for
// lack of space matches ErrNoSpace and removes the temporary file, so a
// refused write keeps none of the space it took.
func (c *File[K, E]) write(b []byte) error {
	err := vfs.WriteFileAtomic(c.fs, c.dir, c.format.File, b)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC):
		_ = c.fs.Remove(filepath.Join(c.dir, c.format.File+".tmp"))
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return fmt.Errorf("felix/catalog: %w", err)
}
