package cache

import (
	"fmt"
	"path/filepath"

	"github.com/felixbroker/felix/engine"
)

// ID names a cache: (tenant, namespace, name). A key within it completes
// the contract's scope (tenant, namespace, cache, key).
type ID struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (id ID) String() string { return id.Tenant + "/" + id.Namespace + "/" + id.Name }

// Check validates each part with engine.CheckName.
func (id ID) Check() error {
	for _, p := range [][2]string{{"tenant", id.Tenant}, {"namespace", id.Namespace}, {"cache", id.Name}} {
		if err := engine.CheckName(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// OwnershipPrefix marks a cache in the engine.StreamID its writes ask
// engine.Ownership about: the name becomes "cache:<name>". ':' is not
// allowed in a stream name, so a cache and a stream never share an owner
// lookup; the cluster layer recognises the prefix.
const OwnershipPrefix = "cache:"

// OwnershipID is the engine.StreamID under which the cache's shards are
// led; counters share it (same scope, same shard, same owner).
func (id ID) OwnershipID() engine.StreamID {
	return engine.StreamID{Tenant: id.Tenant, Namespace: id.Namespace, Name: OwnershipPrefix + id.Name}
}

// Directory layout under the data directory (or the in-memory FS):
//
//	<root>/caches/catalog.json
//	<root>/caches/<tenant>/<namespace>/<cache>/shard-NNNN/values/    the cache's log
//	<root>/caches/<tenant>/<namespace>/<cache>/shard-NNNN/counters/  the counters' log
func cachesDir(root string) string { return filepath.Join(root, "caches") }

func cacheDir(root string, id ID) string {
	return filepath.Join(cachesDir(root), id.Tenant, id.Namespace, id.Name)
}

func shardDir(root string, id ID, shard int) string {
	return filepath.Join(cacheDir(root, id), fmt.Sprintf("shard-%04d", shard))
}

func valuesDir(root string, id ID, shard int) string {
	return filepath.Join(shardDir(root, id, shard), "values")
}

func countersDir(root string, id ID, shard int) string {
	return filepath.Join(shardDir(root, id, shard), "counters")
}
