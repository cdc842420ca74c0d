package replica

import (
	"fmt"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// BenchmarkReplicateOverTCP is one synchronous append at a time through a
// leader of three brokers over loopback peer.TCP (tcpCluster: OnCommit,
// the OS file system in the test's temporary directory), from Append to
// its acknowledgement, at Quorum and at Leader, of 1 record and of 64 of
// 100 bytes. allocs/op counts every goroutine of the three brokers.
//
//	go test ./cluster/replica -run '^$' -bench ReplicateOverTCP -benchmem
func BenchmarkReplicateOverTCP(b *testing.B) {
	for _, level := range []Consistency{ConsistencyQuorum, ConsistencyLeader} {
		for _, n := range []int{1, 64} {
			b.Run(fmt.Sprintf("%v/records=%d", level, n), func(b *testing.B) {
				c := newTCPCluster(b, b.TempDir(), level, shardlog.OnCommit(), "a", "b", "c")
				round := appendRound(b, c.leader(), n, 1)
				for range 200 {
					round()
				}
				b.SetBytes(int64(n * segment.RecordSize(0, 100)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					round()
				}
			})
		}
	}
}
