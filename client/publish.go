package client

import (
	"context"
	"sync"
	"time"
	"unsafe"

	"github.com/felixbroker/felix/netio/wire"
)

// Stream names a stream: (tenant, namespace, name).
type Stream struct {
	Tenant    string
	Namespace string
	Name      string
}

func (s Stream) String() string { return s.Tenant + "/" + s.Namespace + "/" + s.Name }

// ref is s as the codec takes it. The slices share the strings' bytes: the
// encoders only read them.
func (s Stream) ref() wire.StreamRef {
	return wire.StreamRef{Tenant: bytesOf(s.Tenant), Namespace: bytesOf(s.Namespace), Stream: bytesOf(s.Name)}
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// AckMode says when, and how often, the broker answers a publish.
type AckMode uint8

const (
	// AckPerBatch: one answer once every record is durable as the stream's
	// FsyncMode and consistency require. The default.
	AckPerBatch AckMode = iota
	// AckPerMessage: an answer as each run of records becomes durable; the
	// client gathers them and completes the publish with the last.
	AckPerMessage
	// AckNone: no answer. The publish completes once it is handed to the
	// socket and reports no offsets; a refusal still comes back, to
	// WithAsyncErrorHandler.
	AckNone
)

func (a AckMode) wire() wire.AckMode {
	switch a {
	case AckPerMessage:
		return wire.AckPerMessage
	case AckNone:
		return wire.AckNone
	}
	return wire.AckPerBatch
}

// Record is one record of a batch.
type Record struct {
	// Key routes the record: shard xxh3(key) mod shards. Empty: shard 0.
	Key   []byte
	Value []byte
	// Timestamp is the record's time; zero lets the broker stamp it.
	Timestamp time.Time
}

// Position is where one record landed.
type Position struct {
	Shard  int
	Offset int64
}

// AckRun says that Count records of a publish landed on Shard at offsets
// FirstOffset, FirstOffset+1, ... in the order they were sent. A keyed
// batch whose records went to several shards is acknowledged in several
// runs, one per shard.
type AckRun struct {
	Shard       int
	FirstOffset int64
	Count       uint32
}

// PublishOption adjusts one publish. Options are plain values: passing
// them allocates nothing.
type PublishOption struct {
	set  uint8
	key  []byte
	ts   time.Time
	mode AckMode
}

const (
	optKey uint8 = 1 << iota
	optTimestamp
	optAck
)

// WithKey routes a single-record publish by key.
func WithKey(key []byte) PublishOption { return PublishOption{set: optKey, key: key} }

// WithTimestamp gives a single-record publish an explicit timestamp.
func WithTimestamp(t time.Time) PublishOption { return PublishOption{set: optTimestamp, ts: t} }

// WithAck sets the ack mode (default AckPerBatch).
func WithAck(mode AckMode) PublishOption { return PublishOption{set: optAck, mode: mode} }

type publishSpec struct {
	key  []byte
	ts   int64
	ack  wire.AckMode
	bad  bool // a single-record option on a batch
	none bool
}

func specOf(opts []PublishOption, batch bool) publishSpec {
	sp := publishSpec{ack: wire.AckPerBatch}
	for _, o := range opts {
		if o.set&(optKey|optTimestamp) != 0 && batch {
			sp.bad = true
		}
		if o.set&optKey != 0 {
			sp.key = o.key
		}
		if o.set&optTimestamp != 0 {
			sp.ts = unixNano(o.ts)
		}
		if o.set&optAck != 0 {
			sp.ack = o.mode.wire()
		}
	}
	sp.none = sp.ack == wire.AckNone
	return sp
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// scratch holds the wire records of one publish while it is encoded.
var scratchPool = sync.Pool{New: func() any { s := make([]wire.Record, 0, 64); return &s }}

func single(value []byte, sp publishSpec) *[]wire.Record {
	sc := scratchPool.Get().(*[]wire.Record)
	*sc = append((*sc)[:0], wire.Record{Key: sp.key, Value: value, Timestamp: sp.ts})
	return sc
}

func batchOf(records []Record) *[]wire.Record {
	sc := scratchPool.Get().(*[]wire.Record)
	s := (*sc)[:0]
	for i := range records {
		r := &records[i]
		s = append(s, wire.Record{Key: r.Key, Value: r.Value, Timestamp: unixNano(r.Timestamp)})
	}
	*sc = s
	return sc
}

func putScratch(sc *[]wire.Record) {
	clear(*sc) // drop the references to the caller's bytes
	*sc = (*sc)[:0]
	scratchPool.Put(sc)
}

// Publish appends one record to the stream and waits for its
// acknowledgement (under AckNone, only until it is handed to the socket,
// and the Position is zero). It is the contract's publish: it dials again
// if the connection is gone, but never resends. A failure that may or may
// not have been applied (ErrConnectionLost, a *ServerError whose code is
// ambiguous) is returned as is; PublishAtLeastOnce is the variant that
// resends.
//
// value and the key are copied before Publish returns.
func (c *Client) Publish(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) (Position, error) {
	sp := specOf(opts, false)
	sc := single(value, sp)
	cl, err := c.publishWait(ctx, stream, *sc, sp)
	putScratch(sc)
	if err != nil || cl == nil {
		return Position{}, err
	}
	var pos Position
	if len(cl.runs) > 0 {
		pos = Position{Shard: int(cl.runs[0].Shard), Offset: int64(cl.runs[0].FirstOffset)}
	}
	cl.recycle()
	return pos, nil
}

// PublishBatch appends records in one request and waits for their
// acknowledgement; the runs say where the records landed (none under
// AckNone). Like Publish it never resends. The batch must fit the broker's
// limits (records per batch, key and frame size); the client refuses one
// that does not with a local *ServerError (limit_exceeded, frame_too_large)
// before sending anything. The records are copied before it returns.
func (c *Client) PublishBatch(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) ([]AckRun, error) {
	sp := specOf(opts, true)
	if err := batchErr(records, sp); err != nil {
		return nil, err
	}
	sc := batchOf(records)
	cl, err := c.publishWait(ctx, stream, *sc, sp)
	putScratch(sc)
	if err != nil || cl == nil {
		return nil, err
	}
	runs := appendRuns(make([]AckRun, 0, len(cl.runs)), cl.runs)
	cl.recycle()
	return runs, nil
}

func batchErr(records []Record, sp publishSpec) error {
	if sp.bad {
		return ErrOptionNotForBatch
	}
	if len(records) == 0 {
		return ErrEmptyBatch
	}
	return nil
}

// publishWait sends one publish and waits for its acknowledgement. It
// returns the completed call, which the caller reads and recycles, or nil
// under AckNone.
func (c *Client) publishWait(ctx context.Context, stream Stream, recs []wire.Record, sp publishSpec) (*call, error) {
	if sp.none {
		return nil, c.sendPublish(ctx, stream, recs, sp.ack, nil)
	}
	cl := newCall(true)
	if err := c.sendPublish(ctx, stream, recs, sp.ack, cl); err != nil {
		cl.recycle()
		return nil, err
	}
	if abandoned, err := cl.wait(ctx); err != nil {
		if !abandoned {
			cl.recycle()
		}
		return nil, err
	}
	return cl, nil
}

func appendRuns(dst []AckRun, runs []wire.AckRun) []AckRun {
	for _, r := range runs {
		dst = append(dst, AckRun{Shard: int(r.Shard), FirstOffset: int64(r.FirstOffset), Count: r.Count})
	}
	return dst
}

// sendPublish encodes one publish onto the connection. With cl it is
// registered to await its acknowledgement; without (AckNone) it is sent
// under a request id of its own so a refusal can still be reported.
func (c *Client) sendPublish(ctx context.Context, stream Stream, recs []wire.Record, ack wire.AckMode, cl *call) error {
	cn, err := c.conn(ctx)
	if err != nil {
		return err
	}
	ref := stream.ref()
	if err := checkPublish(cn.limits, ref, recs); err != nil {
		return err
	}
	var buf []byte
	var id uint64
	if cl != nil {
		cl.want = uint64(len(recs))
		buf, err = cn.beginRequest(ctx, cl)
		id = cl.id
	} else {
		buf, err = cn.w.begin(ctx)
		id = c.ids.Add(1)
		if err != nil {
			err = cn.sendErr(err)
		}
	}
	if err != nil {
		return err
	}
	start := len(buf)
	buf = wire.AppendPublishFor(buf, cn.features, id, ref, ack, nil, recs)
	if err := cn.limits.CheckFrameSize(len(buf) - start); err != nil {
		cn.w.abort(buf[:start])
		if cl != nil {
			cn.drop(cl)
		}
		return localError(err)
	}
	if cl != nil && cl.future != nil && len(cn.inflight) > 1 {
		// Nobody waits on this frame, and answers to earlier ones are on
		// their way: let the flusher write it with whatever else gathers.
		cn.w.commitAsync(buf)
		return nil
	}
	cn.w.commit(buf)
	return nil
}

// checkPublish applies the broker's limits before anything is encoded: the
// encoders panic on a name they cannot express, and a batch whose bytes
// alone pass the frame limit is refused without building it.
func checkPublish(lim wire.Limits, ref wire.StreamRef, recs []wire.Record) error {
	if err := lim.CheckStreamRef(ref); err != nil {
		return localError(err)
	}
	if err := lim.CheckRecords(recs); err != nil {
		return localError(err)
	}
	var n int
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value)
	}
	return localError(lim.CheckFrameSize(n + wire.HeaderSize))
}
