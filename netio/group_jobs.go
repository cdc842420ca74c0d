package netio

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

// groupJob is one group request handed off the loop: a poll, or an ack,
// nack or extend. A unit of the server's work (counted by admit) and of
// its connection's bound; it answers through the connection's outbox.
// Pooled, with its buffers: a poll or an ack in steady state allocates
// nothing.
type groupJob struct {
	c         *conn
	requestID uint64
	op        wire.Type
	key       group.Key
	who       string
	max       int           // poll: records
	wait      time.Duration // poll: how long to wait for one
	dur       time.Duration // poll: claim; nack: delay; extend: extension
	offsets   []int64       // ack, nack, extend
	notHeld   []uint64
	dst       []group.Delivery
	buf       []byte
}

var groupJobs = sync.Pool{New: func() any { return new(groupJob) }}

func newGroupJob(c *conn, requestID uint64, op wire.Type, k group.Key, who string) *groupJob {
	j := groupJobs.Get().(*groupJob)
	j.c, j.requestID, j.op, j.key, j.who = c, requestID, op, k, who
	return j
}

// release ends the job's unit of work and pools it.
func (j *groupJob) release() {
	c := j.c
	if j.op == wire.TypeGroupPoll {
		c.groups.polls.Add(-1)
	} else {
		c.groups.ops.Add(-1)
	}
	clear(j.dst) // drop the references to the records' bytes
	if cap(j.buf) > groupJobKeepBytes {
		j.buf, j.dst = nil, nil
	}
	j.c, j.key, j.who = nil, group.Key{}, ""
	j.offsets, j.notHeld, j.dst, j.buf = j.offsets[:0], j.notHeld[:0], j.dst[:0], j.buf[:0]
	groupJobs.Put(j)
	c.s.work.done()
}

// poll waits for room in the connection's outbound budget, then claims
// records (waiting for some when none is owed) and answers GROUP_RECORDS.
// Its share of the budget bounds how many bytes it claims, so the polls of
// a connection together stay near the budget however many wait at once.
func (j *groupJob) poll() {
	defer j.release()
	c := j.c
	ctx := c.groups.waitContext()
	room, err := c.out.waitRoom(ctx)
	if err != nil {
		j.ended(ctx, err)
		return
	}
	share := room / int(max(c.groups.polls.Load(), 1))
	req := group.PollRequest{Key: j.key, Consumer: j.who, Max: j.max, Wait: j.wait, Visibility: j.dur,
		MaxBytes: max(min(share, c.s.cfg.Limits.FrameBytesMax-groupRecordsOverhead), 1)}
	j.dst, j.buf, err = c.s.cfg.Groups.PollInto(ctx, req, j.dst[:0], j.buf[:0])
	if len(j.dst) == 0 && err != nil {
		j.ended(ctx, err)
		return
	}
	if err != nil {
		c.s.cfg.Logger.Warn("group poll claimed records, then failed; delivering them", "group", j.key.String(), "err", err)
	}
	j.sendRecords()
}

// ended answers a poll that stopped without records: nothing when its
// connection is gone, shutting_down for Stop, the engine's error else.
func (j *groupJob) ended(ctx context.Context, err error) {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if errors.Is(err, errConnClosed) {
		return
	}
	j.c.sendError(j.requestID, groupToWire(err))
}

// sendRecords encodes the claimed records straight into the outbox.
func (j *groupJob) sendRecords() {
	o := j.c.out
	w := wire.BeginGroupRecords(o.begin(), j.requestID, uint32(j.key.Shard))
	for i := range j.dst {
		d := &j.dst[i]
		w.Add(wire.GroupRecord{Offset: uint64(d.Offset), DeliveryCount: d.Deliveries, Timestamp: d.Timestamp,
			Flags: uint16(d.Flags), Key: d.Key, Value: d.Value})
	}
	o.commit(w.Finish())
}

// settle applies an ack, nack or extend and answers GROUP_RESULT: the
// offsets applied, and those whose claim the consumer did not hold.
func (j *groupJob) settle() {
	defer j.release()
	m := j.c.s.cfg.Groups
	var err error
	switch j.op {
	case wire.TypeGroupAck:
		err = m.Ack(j.key, j.who, j.offsets)
	case wire.TypeGroupNack:
		err = m.Nack(j.key, j.who, j.offsets, j.dur)
	case wire.TypeGroupExtend:
		err = m.Extend(j.key, j.who, j.offsets, j.dur)
	}
	if err != nil {
		err = j.notHeldOf(err)
	}
	if err != nil {
		j.c.sendError(j.requestID, groupToWire(err))
		return
	}
	o := j.c.out
	applied := uint32(max(len(j.offsets)-len(j.notHeld), 0))
	o.commit(wire.AppendGroupResult(o.begin(), j.requestID, applied, j.notHeld))
}

// notHeldOf takes the offsets a *group.ClaimError lists into j.notHeld
// (the rest of the request was applied) and returns any other error.
func (j *groupJob) notHeldOf(err error) error {
	var ce *group.ClaimError
	if !errors.As(err, &ce) {
		return err
	}
	for _, o := range ce.Offsets {
		j.notHeld = append(j.notHeld, uint64(o))
	}
	return nil
}

// groupWorkerIdle is how long a group worker waits for its next job
// before it exits.
const groupWorkerIdle = 10 * time.Second

// groupQueue hands a job to an idle worker. Unbuffered: a send succeeds
// only while a worker waits on it, so a job is never left queued.
var groupQueue = make(chan *groupJob)

// start runs the job on a worker goroutine: an idle one if there is one
// (in steady state there is, and nothing is allocated), a new one
// otherwise. Polls may wait for minutes, so workers are not capped here;
// each connection's bounds (groupPollsMax, groupOpsMax) bound them.
func (j *groupJob) start() {
	select {
	case groupQueue <- j:
	default:
		go groupWorker(j)
	}
}

func groupWorker(j *groupJob) {
	idle := time.NewTimer(groupWorkerIdle)
	defer idle.Stop()
	for {
		j.run()
		idle.Reset(groupWorkerIdle)
		select {
		case j = <-groupQueue:
		case <-idle.C:
			return
		}
	}
}

// run is the job, on its worker.
func (j *groupJob) run() {
	if j.op == wire.TypeGroupPoll {
		j.poll()
		return
	}
	j.settle()
}
