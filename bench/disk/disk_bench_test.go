package disk

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
)

// BenchmarkWriteSync is one 4 KiB write+fdatasync over a prezeroed file,
// bare and through each driver; the driver figures carry their ratio to
// the bare one measured just before.
func BenchmarkWriteSync(b *testing.B) {
	var raw *bench.Result
	paths := []struct {
		name string
		mode ring.Mode
		bare bool
	}{{PathRaw, 0, true}, {"portable", ring.ModePortable, false}, {"io_uring", ring.ModeUring, false}}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			file, err := openDataFile(b.TempDir(), Prezeroed, 16<<20)
			if err != nil {
				b.Fatal(err)
			}
			defer file.close()
			var s syncer = rawSyncer{file: file}
			if !p.bare {
				d, err := ring.Open(ring.Config{Mode: p.mode})
				if err != nil {
					b.Skip(err)
				}
				defer d.Close()
				s = newRingSyncer(d, file)
			}
			r := measureWriteSync(b, s, file)
			if p.bare {
				raw = &r
			} else if raw != nil {
				r.AddBaseline(PathRaw, *raw)
			}
			bench.ReportMetrics(b, r)
		})
	}
}

func measureWriteSync(b *testing.B, s syncer, file *dataFile) bench.Result {
	buf := pattern(make([]byte, 4096))
	rec := bench.NewRecorder(1)
	lane := rec.Lane(0)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		off, _ := file.next(len(buf))
		t0 := time.Now()
		if err := s.writeSync(buf, off); err != nil {
			b.Fatal(err)
		}
		lane.Record(time.Since(t0))
		lane.Count(1, int64(len(buf)))
	}
	records, bytes := rec.Totals()
	m := bench.Measurement{Started: start, Elapsed: time.Since(start), Records: records, Bytes: bytes, Latency: rec.Latency()}
	return bench.NewResult("writesync/"+s.path(), bench.RoleBaseline, bench.Params{RecordBytes: len(buf), IOPath: s.path()}, m)
}
