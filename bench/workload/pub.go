package workload

import (
	"context"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
)

// Pub measures publish throughput and ack latency against t: s.Publishers
// workers over s.Connections connections, each keeping s.Inflight
// requests of s.Batch records of s.RecordBytes in flight, into a fresh
// single-shard durable stream at s.Fsync (deleted afterwards). Latency is
// each record's wait from its request's send (open-loop: its due time) to
// its acknowledgement. Beside it: the TCP loopback baseline of the same
// shape and, when t.DataDir is set, the disk's limit for s.Fsync. A
// RoleWorkload named "pub".
func Pub(ctx context.Context, t Target, s Spec, b *Baselines) (bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	clients, err := t.dial(ctx, s.Connections, s.Inflight*s.Publishers)
	if err != nil {
		return bench.Result{}, err
	}
	defer closeAll(clients)
	stream, err := t.createStream(ctx, clients[0], "pub", s.Fsync)
	if err != nil {
		return bench.Result{}, err
	}
	defer deleteStream(clients[0], stream)
	p := newPubPipe(ctx, clients, stream, s, nil)
	if err := warmup(ctx, s, p); err != nil {
		return bench.Result{}, err
	}
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "pub", rec)
	m, err := bench.RunPipeline(ctx, s.load(s.Publishers), s.Inflight, rec, p)
	stop()
	if err != nil {
		return bench.Result{}, err
	}
	r := bench.NewResult("pub", bench.RoleWorkload, s.params(), m)
	r.Machine = t.machineOf()
	return r, addNetBaselines(ctx, &r, t, s, b, ackBytes)
}

// progress starts s's progress line for a measurement; the returned
// function ends it.
func progress(s Spec, label string, t bench.Totals) func() {
	if s.Progress == nil {
		return func() {}
	}
	return s.Progress(label, t)
}

// addNetBaselines sets the TCP baseline of s's shape (answerBytes back per
// request) beside r and, with t.DataDir, the disk's limit for s.Fsync.
func addNetBaselines(ctx context.Context, r *bench.Result, t Target, s Spec, b *Baselines, answerBytes int) error {
	req := publishFrameBytes(s)
	key := "tcp " + r.Params.String() + " " + itoa(answerBytes)
	tcp, err := b.get(key, func() (bench.Result, error) { return TCPRequestAnswer(ctx, s, req, answerBytes) })
	if err != nil {
		return err
	}
	r.AddBaseline("tcp", tcp)
	if t.DataDir == "" {
		return nil
	}
	name, d, err := diskBaseline(ctx, b, t.DataDir, s, s.Publishers*s.Inflight)
	if err != nil {
		return err
	}
	r.AddBaseline(name, d)
	return nil
}

// pubPipe publishes one worker's batches through its client. stamp, when
// set, writes each record's timestamp into its value before the send.
type pubPipe struct {
	ctx     context.Context
	clients []*client.Client
	stream  client.Stream
	batches [][]client.Record // one per worker, reused: the client copies on send
	records int64
	bytes   int64
	stamp   func(value []byte, due time.Time)
}

func newPubPipe(ctx context.Context, clients []*client.Client, stream client.Stream, s Spec, stamp func([]byte, time.Time)) *pubPipe {
	p := &pubPipe{ctx: ctx, clients: clients, stream: stream, records: int64(s.Batch),
		bytes: int64(s.Batch * s.RecordBytes), stamp: stamp}
	for range s.Publishers {
		batch := make([]client.Record, s.Batch)
		for i := range batch {
			batch[i].Value = pattern(s.RecordBytes)
		}
		p.batches = append(p.batches, batch)
	}
	return p
}

func (p *pubPipe) Send(w int, due time.Time) (any, error) {
	batch := p.batches[w]
	if p.stamp != nil {
		for i := range batch {
			p.stamp(batch[i].Value, due)
		}
	}
	c := p.clients[w%len(p.clients)]
	if len(batch) == 1 {
		return c.PublishAsync(p.ctx, p.stream, batch[0].Value), nil
	}
	return c.PublishBatchAsync(p.ctx, p.stream, batch), nil
}

func (p *pubPipe) Await(_ int, pending any) (int64, int64, error) {
	if _, err := pending.(*client.PublishFuture).Wait(p.ctx); err != nil {
		return 0, 0, err
	}
	return p.records, p.bytes, nil
}

// pattern is n bytes that do not compress to nothing.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}
