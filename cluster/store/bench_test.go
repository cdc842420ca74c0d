package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkEmbeddedStart measures StartEmbedded until the member serves, a
// cluster of one with fsync on, on a fresh directory and on one it wrote
// before, with etcd's default ticks (100 ms, election 1 s) and a cluster of
// one's (10, 100). Reported as ms/start; ns/op adds a read and the Close.
func BenchmarkEmbeddedStart(b *testing.B) {
	for _, ticks := range []struct{ tick, election uint }{{100, 1000}, {10, 100}} {
		for _, restart := range []bool{false, true} {
			name := fmt.Sprintf("tick=%dms/election=%dms/restart=%v", ticks.tick, ticks.election, restart)
			b.Run(name, func(b *testing.B) {
				cfg := EmbedConfig{Dir: b.TempDir(), TickMs: ticks.tick, ElectionMs: ticks.election}
				var took time.Duration
				for b.Loop() {
					if !restart {
						cfg.Dir = b.TempDir()
					}
					took += timeStart(b, cfg)
				}
				b.ReportMetric(float64(took.Microseconds())/1e3/float64(b.N), "ms/start")
			})
		}
	}
}

func timeStart(b *testing.B, cfg EmbedConfig) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), waitMax)
	defer cancel()
	start := time.Now()
	m, err := StartEmbedded(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	if _, _, err := m.Store().Get(ctx, "k"); err != nil {
		b.Fatal(err)
	}
	m.Close()
	return took
}

// BenchmarkGuardedTxn is the control plane's write: a put guarded by its
// epoch and by the key's mod revision.
func BenchmarkGuardedTxn(b *testing.B) {
	for _, impl := range []struct {
		name  string
		store func(b *testing.B) Store
	}{
		{"memory", func(b *testing.B) Store { return NewMemory(MemoryConfig{}) }},
		{"embedded-fsync", func(b *testing.B) Store {
			cfg := testEmbedConfig(b)
			cfg.UnsafeNoFsync = false
			m, err := StartEmbedded(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			return m.Store()
		}},
	} {
		b.Run(impl.name, func(b *testing.B) {
			s := impl.store(b)
			defer s.Close()
			ctx := context.Background()
			lease, _ := s.Grant(ctx, time.Minute)
			l, err := s.Campaign(ctx, election, lease.ID, nil)
			if err != nil {
				b.Fatal(err)
			}
			value := []byte("assignment")
			rev := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				res, err := l.Txn(ctx, Txn{If: []Cmp{ModRevisionIs("cp/shard", rev)}, Then: []Op{Put("cp/shard", value)}})
				if err != nil || !res.Succeeded {
					b.Fatalf("%+v, %v", res, err)
				}
				rev = res.Revision
			}
		})
	}
}
