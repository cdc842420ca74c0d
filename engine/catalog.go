package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// StreamInfo is a stream as the catalog holds it.
type StreamInfo struct {
	ID         StreamID     `json:"id"`
	Config     StreamConfig `json:"config"`
	Generation uint32       `json:"generation"` // leader epoch of every shard, single broker
	Created    time.Time    `json:"created"`
}

// Catalog holds the streams that exist. The broker keeps it in its data
// directory; the cluster layer will supply one backed by the control plane.
// Implementations are safe for concurrent use.
type Catalog interface {
	Create(info StreamInfo) error // ErrStreamExists when the id is taken
	Delete(id StreamID) error     // ErrStreamNotFound when it is not
	Get(id StreamID) (StreamInfo, bool)
	List() []StreamInfo // sorted by id
}

// catalogVersion is the format version of catalog.json. Frozen.
const catalogVersion = 1

const catalogName = "catalog.json"

type catalogFile struct {
	Version int          `json:"version"`
	Streams []StreamInfo `json:"streams"`
}

// FileCatalog is a Catalog kept as JSON in a directory, replaced atomically
// (write a temporary file, sync it, rename it over, sync the directory) on
// every change. With a nil FS it lives in memory only.
type FileCatalog struct {
	fs  vfs.FS
	dir string

	mu      sync.Mutex
	streams map[StreamID]StreamInfo
}

// OpenFileCatalog loads the catalog in dir, or starts an empty one.
func OpenFileCatalog(fs vfs.FS, dir string) (*FileCatalog, error) {
	c := &FileCatalog{fs: fs, dir: dir, streams: map[StreamID]StreamInfo{}}
	if fs == nil {
		return c, nil
	}
	if err := fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("felix/engine: %w", err)
	}
	b, err := readFile(fs, filepath.Join(dir, catalogName))
	if errors.Is(err, vfs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("felix/engine: reading the catalog: %w", err)
	}
	var cf catalogFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("felix/engine: the catalog %s is damaged: %w", filepath.Join(dir, catalogName), err)
	}
	if cf.Version != catalogVersion {
		return nil, fmt.Errorf("felix/engine: catalog version %d, this broker reads %d", cf.Version, catalogVersion)
	}
	for _, s := range cf.Streams {
		c.streams[s.ID] = s
	}
	return c, nil
}

func (c *FileCatalog) Create(info StreamInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.streams[info.ID]; ok {
		return ErrStreamExists
	}
	c.streams[info.ID] = info
	if err := c.save(); err != nil {
		delete(c.streams, info.ID)
		return err
	}
	return nil
}

func (c *FileCatalog) Delete(id StreamID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.streams[id]
	if !ok {
		return ErrStreamNotFound
	}
	delete(c.streams, id)
	if err := c.save(); err != nil {
		c.streams[id] = old
		return err
	}
	return nil
}

func (c *FileCatalog) Get(id StreamID) (StreamInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.streams[id]
	return s, ok
}

func (c *FileCatalog) List() []StreamInfo {
	c.mu.Lock()
	out := make([]StreamInfo, 0, len(c.streams))
	for _, s := range c.streams {
		out = append(out, s)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	return out
}

// save writes the whole catalog durably; called with mu held.
func (c *FileCatalog) save() error {
	if c.fs == nil {
		return nil
	}
	cf := catalogFile{Version: catalogVersion}
	for _, s := range c.streams {
		cf.Streams = append(cf.Streams, s)
	}
	sort.Slice(cf.Streams, func(i, j int) bool { return cf.Streams[i].ID.String() < cf.Streams[j].ID.String() })
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
		return fmt.Errorf("felix/engine: writing %s: %w", name, err)
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
		return fmt.Errorf("felix/engine: writing %s: %w", name, err)
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
