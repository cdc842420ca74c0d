package workload

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// GroupInProcess is Group without a broker or a network: an engine and a
// group manager in this process, on a fresh directory under dir (removed
// afterwards), through a ring driver of s.IO. The same fill, the same
// drains, beside the engine's own subscription; acks are always the
// manager's synchronous Ack. What it tells, set beside Group: how much of
// a group's cost is the engine's.
func GroupInProcess(ctx context.Context, dir string, s Spec, g GroupShape) ([]bench.Result, error) {
	s, g, records, err := groupSpec(s, g)
	if err != nil {
		return nil, err
	}
	g.SyncAck = true
	f, err := openGroupFixture(dir, s, records)
	if err != nil {
		return nil, err
	}
	defer f.close()
	sh, err := f.stream.Shard(0)
	if err != nil {
		return nil, err
	}
	sub, err := sh.Subscribe(engine.SubscribeOptions{Start: engine.StartEarliest})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	params := groupParams(s, g, records)
	params.IOPath = string(f.driver.Kind())
	reader := &engineSubscription{ctx: ctx, sub: sub, recordBytes: s.RecordBytes}
	rs, err := measureGroups(ctx, s, g, records, &engineGroups{ctx: ctx, groups: f.groups}, reader, params)
	machine := bench.DescribeMachine(dir)
	for i := range rs {
		rs[i].Machine = &machine
	}
	return rs, err
}

// groupFixture is an engine with one filled stream and a group manager.
type groupFixture struct {
	driver ring.Driver
	dir    string
	eng    *engine.Engine
	groups *group.Manager
	stream *engine.Stream
}

var groupStream = engine.StreamID{Tenant: "bench", Namespace: "bench", Name: "group"}

func openGroupFixture(dir string, s Spec, records int64) (*groupFixture, error) {
	d, err := ring.Open(ring.Config{Mode: s.IO})
	if err != nil {
		return nil, err
	}
	f := &groupFixture{driver: d}
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
		err = f.fill(s.RecordBytes, records)
	}
	if err != nil {
		f.close()
		return nil, err
	}
	f.groups = group.New(f.eng, group.Options{})
	return f, nil
}

// fill publishes the records in batches of fillBatchRecords, one batch
// at a time.
func (f *groupFixture) fill(recordBytes int, records int64) error {
	recs := make([]engine.Record, fillBatchRecords)
	value := pattern(recordBytes)
	for i := range recs {
		recs[i].Value = value
	}
	w := make(publishWaiter, 1)
	for left := records; left > 0; left -= fillBatchRecords {
		if err := f.stream.Publish(recs[:min(left, fillBatchRecords)], w); err != nil {
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

// engineGroups is a group's consumers on the manager; consumer w owns
// its scratch.
type engineGroups struct {
	ctx       context.Context
	groups    *group.Manager
	key       group.Key
	consumers []string
	offsets   [][]int64
	dst       [][]group.Delivery
	bufs      [][]byte
}

func (e *engineGroups) start(name string, consumers int) error {
	e.key = group.Key{Stream: groupStream, Group: name}
	e.consumers = make([]string, consumers)
	e.offsets, e.dst, e.bufs = make([][]int64, consumers), make([][]group.Delivery, consumers), make([][]byte, consumers)
	for w := range e.consumers {
		e.consumers[w] = "consumer-" + strconv.Itoa(w)
	}
	return e.groups.Create(e.key, engine.StartEarliest, 0)
}

func (e *engineGroups) take(w, max int) (int64, int64, error) {
	var err error
	e.dst[w], e.bufs[w], err = e.groups.PollInto(e.ctx, group.PollRequest{Key: e.key, Consumer: e.consumers[w], Max: max},
		e.dst[w][:0], e.bufs[w][:0])
	if err != nil || len(e.dst[w]) == 0 {
		return 0, 0, err
	}
	offsets := e.offsets[w][:0]
	var bytes int64
	for _, d := range e.dst[w] {
		offsets = append(offsets, d.Offset)
		bytes += int64(len(d.Value))
	}
	e.offsets[w] = offsets
	return int64(len(offsets)), bytes, e.groups.Ack(e.key, e.consumers[w], offsets)
}

func (e *engineGroups) finish() (acked, redelivered uint64, err error) {
	d, err := e.groups.Describe(e.key)
	return d.Acked, d.Redelivered, err
}

// engineSubscription reads an engine subscription's framed records.
type engineSubscription struct {
	ctx         context.Context
	sub         *engine.Subscription
	recordBytes int
	buf         []byte
}

func (r *engineSubscription) next(max int) (records, bytes, missed int64, err error) {
	if r.buf, err = r.sub.Next(r.ctx, r.buf[:0], max*segment.RecordSize(0, r.recordBytes)); err != nil {
		return 0, 0, 0, err
	}
	it := segment.NewIter(r.buf)
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		records++
		bytes += int64(len(rec.Value))
	}
	return records, bytes, 0, nil
}
