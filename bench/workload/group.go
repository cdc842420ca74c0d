package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// GroupRecordsDefault is how many records the group workload drains when
// the Spec gives no Count.
const GroupRecordsDefault = 100_000

// errDrained ends a drain: there is nothing left to take.
var errDrained = errors.New("felix/bench/workload: drained")

// Group measures consumer groups in this process: a fresh durable stream
// under dir at s.Fsync is filled with s.Count records (GroupRecordsDefault
// when zero) of s.RecordBytes, then s.Subscribers consumers of one group
// poll up to s.Batch records each and acknowledge them, until every record
// is acknowledged or s.Duration passes. Latency is a poll and its ack,
// weighted by the records they carried. Beside it: one plain subscription
// draining the same records from the start (subscription/drain). A
// RoleWorkload named "group".
func Group(ctx context.Context, dir string, s Spec, b *Baselines) (bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	records := s.Count
	if records == 0 {
		records = GroupRecordsDefault
	}
	f, err := openGroupFixture(dir, s, records)
	if err != nil {
		return bench.Result{}, err
	}
	defer f.close()
	params := s.params()
	params.Publishers, params.Connections, params.Subscribers, params.Rate = 0, 0, s.Subscribers, 0
	params.Extra = map[string]string{"records": strconv.FormatInt(records, 10)}
	r, err := f.drainGroup(ctx, s, params)
	if err != nil {
		return bench.Result{}, err
	}
	base, err := f.drainSubscription(ctx, s, params)
	if err != nil {
		return bench.Result{}, err
	}
	r.AddBaseline("subscription", base)
	machine := bench.DescribeMachine(dir)
	r.Machine = &machine
	return r, nil
}

// groupFixture is an engine with one filled stream and a group manager.
type groupFixture struct {
	driver  ring.Driver
	dir     string
	eng     *engine.Engine
	groups  *group.Manager
	stream  *engine.Stream
	records int64
}

var groupStream = engine.StreamID{Tenant: "bench", Namespace: "bench", Name: "group"}

func openGroupFixture(dir string, s Spec, records int64) (*groupFixture, error) {
	d, err := ring.Open(ring.Config{Mode: s.IO})
	if err != nil {
		return nil, err
	}
	f := &groupFixture{driver: d, records: records}
	if f.dir, err = os.MkdirTemp(dir, "felix-bench-group-"); err != nil {
		d.Close()
		return nil, fmt.Errorf("felix/bench/workload: %w", err)
	}
	f.eng, err = engine.Open(engine.Options{FS: vfs.NewOS(d), Dir: f.dir, Fsync: s.Fsync, PrepareSegments: true})
	if err == nil {
		_, err = f.eng.CreateStream(groupStream, engine.StreamConfig{Durable: true})
	}
	if err == nil {
		f.stream, err = f.eng.Stream(groupStream)
	}
	if err == nil {
		err = f.fill(s.RecordBytes)
	}
	if err != nil {
		f.close()
		return nil, err
	}
	f.groups = group.New(f.eng, group.Options{})
	return f, nil
}

// fill publishes the records in batches of 256, one batch at a time.
func (f *groupFixture) fill(recordBytes int) error {
	const batch = 256
	recs := make([]engine.Record, batch)
	for i := range recs {
		recs[i].Value = pattern(recordBytes)
	}
	w := make(publishWaiter, 1)
	for left := f.records; left > 0; left -= batch {
		if err := f.stream.Publish(recs[:min(left, batch)], w); err != nil {
			return err
		}
		if err := <-w; err != nil {
			return err
		}
	}
	return nil
}

type publishWaiter chan error

func (w publishWaiter) Published(_ []engine.AckRun, err error) { w <- err }

func (f *groupFixture) close() {
	if f.groups != nil {
		f.groups.Close()
	}
	if f.eng != nil {
		f.eng.Close()
	}
	f.driver.Close()
	os.RemoveAll(f.dir)
}

// drainGroup has s.Subscribers consumers poll and ack until the group is
// drained.
func (f *groupFixture) drainGroup(ctx context.Context, s Spec, params bench.Params) (bench.Result, error) {
	k := group.Key{Stream: groupStream, Group: "bench"}
	if err := f.groups.Create(k, engine.StartEarliest, 0); err != nil {
		return bench.Result{}, err
	}
	consumers := make([]string, s.Subscribers)
	offsets := make([][]int64, s.Subscribers)
	dst := make([][]group.Delivery, s.Subscribers)
	bufs := make([][]byte, s.Subscribers)
	for w := range consumers {
		consumers[w] = "consumer-" + strconv.Itoa(w)
		offsets[w] = make([]int64, 0, s.Batch)
	}
	op := func(w int) (int64, int64, error) {
		var err error
		dst[w], bufs[w], err = f.groups.PollInto(ctx, group.PollRequest{Key: k, Consumer: consumers[w], Max: min(s.Batch, group.PollRecordsMax)},
			dst[w][:0], bufs[w][:0])
		if err != nil {
			return 0, 0, err
		}
		if len(dst[w]) == 0 {
			return 0, 0, errDrained
		}
		offsets[w] = offsets[w][:0]
		var bytes int64
		for _, d := range dst[w] {
			offsets[w] = append(offsets[w], d.Offset)
			bytes += int64(len(d.Value))
		}
		return int64(len(offsets[w])), bytes, f.groups.Ack(k, consumers[w], offsets[w])
	}
	return f.drain(ctx, s, "group", bench.RoleWorkload, params, s.Subscribers, op)
}

// drainSubscription reads every record once through one subscription from
// the start: the raw read path a group's deliveries stand on.
func (f *groupFixture) drainSubscription(ctx context.Context, s Spec, params bench.Params) (bench.Result, error) {
	sh, err := f.stream.Shard(0)
	if err != nil {
		return bench.Result{}, err
	}
	sub, err := sh.Subscribe(engine.SubscribeOptions{Start: engine.StartEarliest})
	if err != nil {
		return bench.Result{}, err
	}
	defer sub.Close()
	var buf []byte
	var read int64
	op := func(int) (int64, int64, error) {
		if read >= f.records {
			return 0, 0, errDrained
		}
		var err error
		if buf, err = sub.Next(ctx, buf[:0], s.Batch*(s.RecordBytes+64)); err != nil {
			return 0, 0, err
		}
		n := countRecords(buf)
		read += n
		return n, int64(len(buf)), nil
	}
	params.Subscribers = 1
	return f.drain(ctx, s, "subscription/drain", bench.RoleBaseline, params, 1, op)
}

// drain runs op from workers until one reports errDrained, or the
// duration (an hour when none is given) passes.
func (f *groupFixture) drain(ctx context.Context, s Spec, name string, role bench.Role, params bench.Params, workers int, op bench.Op) (bench.Result, error) {
	d := s.Duration
	if d == 0 {
		d = time.Hour
	}
	rec := bench.NewRecorder(workers)
	stop := progress(s, name, rec)
	m, err := bench.Run(ctx, bench.Load{Workers: workers, Duration: d}, rec, op)
	stop()
	if err != nil && !errors.Is(err, errDrained) {
		return bench.Result{}, err
	}
	return bench.NewResult(name, role, params, m), nil
}

// countRecords counts the framed records in b.
func countRecords(b []byte) int64 {
	var n int64
	it := segment.NewIter(b)
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	return n
}
