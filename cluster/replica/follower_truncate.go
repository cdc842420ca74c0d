package replica

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/felixbroker/felix/netio/wire"
)

// The synchronisation with a new generation's leader (KIP-279, as
// CLUSTER.md's "Promotion" step 6 and "What the anchors taught us" say).
// Before it appends anything for the leader of F, a replica removes what
// that leader does not hold: records of older generations the leader
// never had. It asks the leader, round by round:
//
//	GENERATION_END{Log, LeaderGen: F, Asked: g}, g = the log's last generation
//	GENERATION_END_OK{LeaderGen: g', End}
//
// The answer's LeaderGen is reused: it carries g', the largest generation
// at most g that the leader's log holds (0 for none), and End is one past
// the leader's last record of a generation at most g. The replica
// truncates to
//
//	min(End, own GenerationEnd(g'))
//
// (never below its Start). If its last generation is now g' its log is a
// prefix of the leader's: its last record and the leader's record at that
// offset were both written by the leader of g', and a log holds a
// generation's records from the offset that leader began at, so by the
// prefix rule every record up to it matches. Otherwise its last
// generation is below g' (and below g): it asks again with it. The last
// generation falls every round, so the rounds end; an empty log is
// synchronised at once. Then A = F is persisted and appends begin.
//
// A fence above F ends the synchronisation and waits for it before it is
// answered (stopSyncBelow): this broker may lead next, and its leader's
// appends must never meet a truncation for an older leader.
//
// A leader that answers ERROR (it no longer leads at F) or nothing ends
// the attempt; the leader's next REPLICATE starts another. No AppendAt
// runs meanwhile: Replicate appends only once synced, and Log.Truncate
// waits for the appends already queued.

// syncRoundsMax bounds the rounds of one synchronisation; each lowers the
// log's last generation, so only a log of very many generations (or a
// leader that answers wrongly) reaches it.
const syncRoundsMax = 1024

var errSuperseded = errors.New("felix/replica: the generation moved on during the synchronisation")

// startSyncLocked starts the synchronisation with from, leader of gen,
// unless one runs. mu held.
func (f *Follower) startSyncLocked(from string, gen uint64) {
	if f.syncing || f.closed {
		return
	}
	ctx, stop := context.WithCancel(f.ctx)
	f.syncing, f.syncGen, f.syncStop, f.syncDone = true, gen, stop, make(chan struct{})
	f.wg.Add(1)
	go f.synchronise(ctx, from, gen, f.syncDone)
}

// synchronise runs on its own goroutine.
func (f *Follower) synchronise(ctx context.Context, from string, gen uint64, done chan struct{}) {
	defer f.wg.Done()
	defer close(done)
	err := f.truncateFor(ctx, from, gen, gen)
	if err == nil {
		_, err = f.fences.Update(func(s *FenceState) error {
			if s.Generation != gen {
				return errSuperseded
			}
			s.Synced = gen
			return nil
		})
	}
	// The log's next offset and last generation, for Replicate: nothing
	// appends while syncing is set.
	next, lastGen := nextOffset(f.log), f.log.LastGeneration()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncStop()
	f.syncing, f.syncStop = false, nil
	f.next, f.lastGen = next, lastGen
	if err != nil {
		if !errors.Is(err, errSuperseded) && f.ctx.Err() == nil {
			f.logger.Warn("replica could not synchronise with its leader", "log", f.ref.String(), "leader", from, "generation", gen, "err", err)
		}
		return
	}
	if f.desynced == gen {
		f.desynced = 0
	}
}

// truncateFor truncates the log until it is a prefix of from's, the
// leader of gen; asLeader is the generation from is asked as the leader
// of (gen; 0 asks it as a replica, for an adoption: follower_adopt.go).
func (f *Follower) truncateFor(ctx context.Context, from string, gen, asLeader uint64) error {
	var req, buf []byte
	for range syncRoundsMax {
		if ctx.Err() != nil || f.fences.State().Generation != gen {
			return errSuperseded
		}
		start := f.log.Start()
		if nextOffset(f.log) == start {
			return nil // empty: nothing to contradict the leader
		}
		asked := f.log.LastGeneration()
		var held uint32
		var end int64
		var err error
		held, end, req, buf, err = f.askGenerationEnd(ctx, from, asLeader, asked, req, buf)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errSuperseded // a fence above gen: its answer waits for this to end
		}
		to := max(min(end, f.log.GenerationEnd(held)), start)
		if to < nextOffset(f.log) {
			if err := f.log.Truncate(to); err != nil {
				return fmt.Errorf("felix/replica: truncating %s at %d for the leader of generation %d: %w", f.ref.String(), to, gen, err)
			}
		}
		if f.log.LastGeneration() == held {
			return nil
		}
	}
	return fmt.Errorf("felix/replica: %s not synchronised with the leader of generation %d after %d rounds", f.ref.String(), gen, syncRoundsMax)
}

// askGenerationEnd asks from, leader of gen (0: any replica), where its log ends for
// generation asked: held is the largest generation at most asked its log
// holds, end one past its last record of such a generation.
func (f *Follower) askGenerationEnd(ctx context.Context, from string, gen uint64, asked uint32, req, buf []byte) (held uint32, end int64, _, _ []byte, err error) {
	req = wire.AppendGenerationEnd(req[:0], 0, wire.GenerationEnd{Log: f.ref, LeaderGen: gen, Asked: uint64(asked)})
	ctx, cancel := context.WithTimeout(ctx, f.callTimeout)
	defer cancel()
	answer, err := f.tr.Call(ctx, from, req, buf)
	if err != nil {
		return 0, 0, req, buf, fmt.Errorf("felix/replica: asking %s GENERATION_END: %w", from, err)
	}
	buf = answer.Body
	switch answer.Type {
	case wire.TypeGenerationEndOK:
	case wire.TypeError:
		var e wire.Error
		if err := e.Decode(answer, wire.Limits{}); err != nil {
			return 0, 0, req, buf, fmt.Errorf("felix/replica: %s answered GENERATION_END with a malformed ERROR: %w", from, err)
		}
		return 0, 0, req, buf, fmt.Errorf("felix/replica: %s refused GENERATION_END: %w", from, &e)
	default:
		return 0, 0, req, buf, fmt.Errorf("felix/replica: %s answered GENERATION_END with %v", from, answer.Type)
	}
	var ok wire.GenerationEndOK
	if err := ok.Decode(answer, wire.Limits{}); err != nil {
		return 0, 0, req, buf, fmt.Errorf("felix/replica: %s answered GENERATION_END: %w", from, err)
	}
	if ok.LeaderGen > uint64(asked) || ok.LeaderGen > math.MaxUint32 {
		return 0, 0, req, buf, fmt.Errorf("%w: %s answered GENERATION_END for generation %d with generation %d, above it",
			ErrMalformed, from, asked, ok.LeaderGen)
	}
	return uint32(ok.LeaderGen), ok.End, req, buf, nil
}
