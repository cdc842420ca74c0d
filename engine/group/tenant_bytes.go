package group

import (
	"path/filepath"
	"strings"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// TenantBytes is what tenant's consumer groups hold: the cursor and
// dead-letter logs of every shard of its durable streams. A shard whose
// groups are open counts its logs' records (shardlog Stats().Bytes); one
// whose groups no operation has opened since the broker started counts
// its logs' segment files as they are on disk, the last of each at its
// preallocated size. It walks the tenant's streams and lists directories,
// so a caller on a hot path keeps the figure and refreshes it now and then
// (netio.StoredBytes does).
func (m *Manager) TenantBytes(tenant string) int64 {
	var n int64
	for _, info := range m.eng.Streams(tenant, "") {
		if !info.Config.Durable {
			continue
		}
		s, err := m.eng.Stream(info.ID)
		if err != nil {
			continue // deleted meanwhile
		}
		for i := range s.Shards() {
			if sh, err := s.Shard(i); err == nil {
				n += m.shardGroupBytes(sh)
			}
		}
	}
	return n
}

// shardGroupBytes is what sh's two group logs hold.
func (m *Manager) shardGroupBytes(sh *engine.Shard) int64 {
	m.mu.RLock()
	sg := m.shards[sh]
	m.mu.RUnlock()
	if sg != nil {
		return sg.cursors.log().Stats().Bytes + sg.deadLog.log().Stats().Bytes
	}
	dir := filepath.Join(sh.Dir(), groupsDir)
	return segmentFileBytes(m.eng.FS(), filepath.Join(dir, cursorsDir)) +
		segmentFileBytes(m.eng.FS(), filepath.Join(dir, deadDir))
}

// segmentFileBytes sums the sizes of the segment files in dir; 0 when dir
// does not exist (a shard no group was ever made on).
func segmentFileBytes(fs vfs.FS, dir string) int64 {
	names, err := fs.List(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		if !strings.HasSuffix(name, segment.SegmentSuffix) {
			continue
		}
		if size, err := fs.Stat(filepath.Join(dir, name)); err == nil {
			n += size // a file gone meanwhile (compaction, retention) counts nothing
		}
	}
	return n
}
