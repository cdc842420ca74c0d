package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"sync"

	"github.com/felixbroker/felix/segment/vfs"
)

// Catalog holds the caches that exist. The broker keeps it beside the
// engine's stream catalog in its data directory; the cluster layer will
// supply one backed by the control plane. Implementations are safe for
// concurrent use.
type Catalog interface {
	Create(info Info) error // ErrCacheExists when the id is taken
	Delete(id ID) error     // ErrCacheNotFound when it is not
	Get(id ID) (Info, bool)
	List() []Info // sorted by id
}

// catalogVersion is the format version of caches/catalog.json. Frozen.
const catalogVersion = 1

const catalogName = "catalog.json"

type catalogFile struct {
	Version int    `json:"version"`
	Caches  []Info `json:"caches"`
}

// FileCatalog is a Catalog kept as JSON in a directory, replaced atomically
// (write a temporary file, sync it, rename it over, sync the directory) on
// every change, as the engine keeps its stream catalog. With a nil FS it
// lives in memory only.
type FileCatalog struct {
	fs  vfs.FS
	dir string

	mu     sync.Mutex
	caches map[ID]Info
}

// OpenFileCatalog loads the catalog in dir, or starts an empty one.
func OpenFileCatalog(fs vfs.FS, dir string) (*FileCatalog, error) {
	c := &FileCatalog{fs: fs, dir: dir, caches: map[ID]Info{}}
	if fs == nil {
		return c, nil
	}
	if err := fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("felix/cache: %w", err)
	}
	path := filepath.Join(dir, catalogName)
	b, err := readFile(fs, path)
	if errors.Is(err, vfs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("felix/cache: reading the catalog: %w", err)
	}
	var cf catalogFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("felix/cache: the catalog %s is damaged: %w", path, err)
	}
	if cf.Version != catalogVersion {
		return nil, fmt.Errorf("felix/cache: catalog version %d, this broker reads %d", cf.Version, catalogVersion)
	}
	for _, info := range cf.Caches {
		c.caches[info.ID] = info
	}
	return c, nil
}

func (c *FileCatalog) Create(info Info) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.caches[info.ID]; ok {
		return ErrCacheExists
	}
	c.caches[info.ID] = info
	if err := c.save(); err != nil {
		delete(c.caches, info.ID)
		return err
	}
	return nil
}

func (c *FileCatalog) Delete(id ID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.caches[id]
	if !ok {
		return ErrCacheNotFound
	}
	delete(c.caches, id)
	if err := c.save(); err != nil {
		c.caches[id] = old
		return err
	}
	return nil
}

func (c *FileCatalog) Get(id ID) (Info, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.caches[id]
	return info, ok
}

func (c *FileCatalog) List() []Info {
	c.mu.Lock()
	out := make([]Info, 0, len(c.caches))
	for _, info := range c.caches {
		out = append(out, info)
	}
	c.mu.Unlock()
	sortInfos(out)
	return out
}

func sortInfos(infos []Info) {
	sort.Slice(infos, func(i, j int) bool { return infos[i].ID.String() < infos[j].ID.String() })
}

// save writes the whole catalog durably; called with mu held.
func (c *FileCatalog) save() error {
	if c.fs == nil {
		return nil
	}
	cf := catalogFile{Version: catalogVersion}
	for _, info := range c.caches {
		cf.Caches = append(cf.Caches, info)
	}
	sortInfos(cf.Caches)
	b, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(c.fs, c.dir, catalogName, b)
}

// writeFileAtomic replaces dir/name with b so a crash leaves the old or the
// new content, never a mix.
func writeFileAtomic(fs vfs.FS, dir, name string, b []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	_ = fs.Remove(tmp)
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("felix/cache: writing %s: %w", name, err)
	}
	_, err = f.WriteAtSync(b, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = fs.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("felix/cache: writing %s: %w", name, err)
	}
	return nil
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}
