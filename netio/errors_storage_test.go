package netio

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// A shard offline for a damaged record answers storage_corrupt, which a
// client neither retries (the same shard refuses again until repaired) nor
// takes for a publish that may have landed (it was refused before any
// work), with the log's message naming the file and the byte.
func TestAnOfflineShardIsStorageCorruptOnTheWire(t *testing.T) {
	err := fmt.Errorf("felix/engine: publish: %w", shardlog.ErrOffline)
	e := toWire(err)
	if e.Code != wire.CodeStorageCorrupt || e.Message != err.Error() {
		t.Fatalf("an offline shard answers %v %q", e.Code, e.Message)
	}
	if e.Code.Retryable() || e.Code.Ambiguous() {
		t.Fatalf("storage_corrupt retryable %v, ambiguous %v", e.Code.Retryable(), e.Code.Ambiguous())
	}
}
