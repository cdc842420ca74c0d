package replica

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// The follower tests' rig: a real shardlog.Log on a MemFS, a Follower of
// it as broker "f", and a fake leader "L" on an in-memory network that
// answers GENERATION_END from a model of its log (the generation of each
// offset). Run inside a testing/synctest bubble.

const (
	folDir    = "/data/s/0"
	folLeader = "L"
)

var folRef = wire.LogRef{Kind: 1, Tenant: []byte("t"), Namespace: []byte("ns"), Name: []byte("s")}

type folRig struct {
	t      *testing.T
	fs     *vfs.MemFS
	mode   shardlog.FsyncMode
	log    *shardlog.Log
	net    *peer.Network
	tr     *peer.Mem
	leader *fakeLeader
	f      *Follower
	acks   chan wire.ReplicateAck
	answer func(wire.ReplicateAck)
}

func folOptions(fs vfs.FS, mode shardlog.FsyncMode) shardlog.Options {
	return shardlog.Options{FS: fs, Dir: folDir, Fsync: mode, SegmentBytes: 1 << 20, BufferBytes: 64 << 10,
		VerifyPacer: shardlog.NewPacer(0)}
}

// newFolRig opens the log (after seed appends records of the given
// generations, one each, through Append) and the Follower.
func newFolRig(t *testing.T, mode shardlog.FsyncMode, seed []uint32) *folRig {
	t.Helper()
	r := &folRig{t: t, fs: vfs.NewMem(), mode: mode, acks: make(chan wire.ReplicateAck, 256)}
	r.answer = func(a wire.ReplicateAck) { r.acks <- a }
	r.net = peer.NewNetwork(peer.NetworkOptions{Seed: 1})
	t.Cleanup(r.net.Close)
	r.leader = &fakeLeader{}
	lt, err := r.net.Join(folLeader)
	if err != nil {
		t.Fatal(err)
	}
	lt.Handle(r.leader)
	t.Cleanup(func() { lt.Close() })
	if r.tr, err = r.net.Join("f"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.tr.Close() })
	r.openLog()
	done := make(chanWaiter, 1) // AppendWait's pooled waiters may come from outside the bubble
	for i, g := range seed {
		_, err := r.log.Append([]shardlog.Entry{{Value: folValue(int64(i), g), Timestamp: int64(i + 1)}}, g, done)
		if err == nil {
			err = <-done
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	r.openFollower(false)
	return r
}

func (r *folRig) openLog() {
	r.t.Helper()
	l, err := shardlog.Open(folOptions(r.fs, r.mode))
	if err != nil {
		r.t.Fatal(err)
	}
	r.log = l
	r.t.Cleanup(func() { l.Close() })
}

func (r *folRig) openFollower(newDisk bool) {
	r.t.Helper()
	f, err := NewFollower(FollowerConfig{Ref: folRef, Log: r.log, FS: r.fs, Dir: folDir, Transport: r.tr,
		NewDisk: newDisk, DiskID: "disk-f"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.f = f
	r.t.Cleanup(func() { f.Close() })
}

// folValue is the value of the record at offset under generation gen, so
// a log's content says which leader wrote each record.
func folValue(offset int64, gen uint32) []byte { return fmt.Appendf(nil, "v%d@g%d", offset, gen) }

// records frames the records [first, first+len(gens)) with the given
// generations, as the leader's log would hold them.
func records(first int64, gens ...uint32) []byte {
	var b []byte
	for i, g := range gens {
		off := first + int64(i)
		b = segment.AppendRecordParts(b, off, g, 0, off+1, nil, folValue(off, g))
	}
	return b
}

func replicate(gen uint64, first int64, prev uint64, recs []byte) *wire.Replicate {
	return &wire.Replicate{Log: folRef, Generation: gen, First: first, PrevGen: prev, Records: recs}
}

// send hands m to the follower and returns its answer, waiting for it.
func (r *folRig) send(m *wire.Replicate) wire.ReplicateAck {
	r.t.Helper()
	if err := r.f.Replicate(folLeader, m, r.answer); err != nil {
		r.t.Fatalf("Replicate: %v", err)
	}
	select {
	case a := <-r.acks:
		return a
	case <-time.After(time.Minute):
		r.t.Fatal("no answer to a REPLICATE")
		return wire.ReplicateAck{}
	}
}

// content is the log's records as (offset, generation, value) lines.
func (r *folRig) content() []string { return logContent(r.t, r.log) }

func logContent(t *testing.T, l *shardlog.Log) []string {
	t.Helper()
	var out []string
	for from := l.Start(); from < l.End(); {
		b, next, err := l.Read(from, 1<<16, nil)
		if err != nil {
			t.Fatalf("read at %d: %v", from, err)
		}
		it := segment.NewIter(b)
		for rec, ok := it.Next(); ok; rec, ok = it.Next() {
			out = append(out, fmt.Sprintf("%d g%d %s", rec.Offset, rec.Generation, rec.Value))
		}
		from = next
	}
	return out
}

// want is the content of a log holding gens from offset 0, each record
// written by the leader of its generation.
func want(gens ...uint32) []string {
	var out []string
	for i, g := range gens {
		out = append(out, fmt.Sprintf("%d g%d %s", i, g, folValue(int64(i), g)))
	}
	return out
}

func sameLines(a, b []string) bool {
	return bytes.Equal([]byte(fmt.Sprint(a)), []byte(fmt.Sprint(b)))
}

// fakeLeader answers GENERATION_END from gens, the generation of each
// offset of its log, as the real leader does (node_serve.go): End is one
// past its last record of a generation at most Asked, LeaderGen that
// record's generation. refuse answers ERROR not_leader instead.
type fakeLeader struct {
	mu     sync.Mutex
	gens   []uint32
	refuse int // how many questions to refuse before answering
	asked  []uint64
}

func (l *fakeLeader) lock()   { l.mu.Lock() }
func (l *fakeLeader) unlock() { l.mu.Unlock() }

func (l *fakeLeader) set(gens ...uint32) {
	l.lock()
	l.gens = gens
	l.unlock()
}

func (l *fakeLeader) questions() []uint64 {
	l.lock()
	defer l.unlock()
	return append([]uint64(nil), l.asked...)
}

func (l *fakeLeader) ServePeer(_ string, req wire.Frame, rep peer.Reply) {
	var m wire.GenerationEnd
	if req.Type != wire.TypeGenerationEnd || m.Decode(req, wire.Limits{}) != nil {
		_ = rep.Answer(wire.AppendError(nil, 0, &wire.Error{Code: wire.CodeMalformedFrame, Message: "not a GENERATION_END"}))
		return
	}
	l.lock()
	defer l.unlock()
	l.asked = append(l.asked, m.Asked)
	if l.refuse > 0 {
		l.refuse--
		_ = rep.Answer(wire.AppendError(nil, 0, &wire.Error{Code: wire.CodeNotLeader, Message: "not the leader"}))
		return
	}
	var held uint32
	end := int64(len(l.gens))
	for i, g := range l.gens {
		if uint64(g) > m.Asked {
			end = int64(i)
			break
		}
		held = g
	}
	_ = rep.Answer(wire.AppendGenerationEndOK(nil, 0, wire.GenerationEndOK{LeaderGen: uint64(held), End: end}))
}

type chanWaiter chan error

func (c chanWaiter) Committed(_, _ int64, err error) { c <- err }
