package control

import (
	"context"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio/wire"
)

// fence sends one FENCE to the replica's broker off the driver's
// goroutine, within a lease, and steps its FENCE_OK when it comes. A fence
// unanswered, refused or answered for another disk is only logged: the
// machine sends it again.
func (d *FailoverDriver) fence(ctx context.Context, f failover.Fence) {
	req := wire.AppendFence(nil, 0, wire.Fence{Log: refOfShard(f.Shard), Generation: f.Generation, Epoch: f.Epoch})
	d.log.Debug("control plane failover: a fence sent", "shard", f.Shard.String(), "to", f.To.String(), "generation", f.Generation)
	d.wg.Go(func() {
		sent := time.Now()
		ev, err := d.callFence(ctx, f, req)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Info("control plane failover: a fence not answered", "shard", f.Shard.String(), "to", f.To.String(),
					"generation", f.Generation, "err", err, "after", time.Since(sent))
			}
			return
		}
		d.log.Info("control plane failover: a fence answered", "shard", f.Shard.String(), "from", f.To.String(),
			"generation", f.Generation, "log_end", ev.LogEnd, "last_generation", ev.LastGen, "after", time.Since(sent))
		d.hand(ctx, func() error { d.step(ctx, ev); return nil })
	})
}

// callFence sends the fence and reads its answer.
func (d *FailoverDriver) callFence(ctx context.Context, f failover.Fence, req []byte) (failover.FenceReplied, error) {
	ctx, cancel := context.WithTimeout(ctx, d.lease)
	defer cancel()
	answer, err := d.peers.Call(ctx, f.To.Broker, req, nil)
	if err != nil {
		return failover.FenceReplied{}, err
	}
	switch answer.Type {
	case wire.TypeFenceOK:
	case wire.TypeError:
		var e wire.Error
		if err := e.Decode(answer, wire.Limits{}); err != nil {
			return failover.FenceReplied{}, err
		}
		return failover.FenceReplied{}, &e
	default:
		return failover.FenceReplied{}, fmt.Errorf("FENCE answered with %v", answer.Type)
	}
	var ok wire.FenceOK
	if err := ok.Decode(answer, wire.Limits{}); err != nil {
		return failover.FenceReplied{}, err
	}
	if len(ok.DiskID) != 0 && string(ok.DiskID) != f.To.DiskID {
		return failover.FenceReplied{}, fmt.Errorf("FENCE_OK from disk %q, not the replica's", ok.DiskID)
	}
	return failover.FenceReplied{Shard: f.Shard, From: f.To, Generation: ok.Generation, Epoch: ok.Epoch,
		LogEnd: ok.LogEnd, LastGen: uint32(ok.LastGen), Durable: ok.Durable,
		NewDisk: ok.Flags&wire.FenceNewDisk != 0, Clean: ok.Flags&wire.FenceClean != 0}, nil
}

// write carries out one Write off the driver's goroutine, as one txn
// comparing the key's modification revision and guarded by the term's
// epoch, and steps its outcome: WriteDone, or WriteFailed followed by
// what the key holds now (read again, as the machine asks). A write the
// epoch guard refused ends the term.
func (d *FailoverDriver) write(ctx context.Context, w failover.Write) {
	j := writeJob(cluster.Write(w))
	leader := "none"
	if w.Assignment.Leader != (cluster.Replica{}) {
		leader = w.Assignment.Leader.String()
	}
	d.log.Info("control plane failover: writing an assignment", "shard", w.Shard.String(),
		"generation", w.Assignment.Generation, "leader", leader, "since_term_began", d.now())
	d.wg.Go(func() {
		sent := time.Now()
		wctx, cancel := context.WithTimeout(ctx, d.lease)
		j.res, j.err = d.lead.Txn(wctx, j.txn)
		cancel()
		switch {
		case j.deposed():
			err := fmt.Errorf("%w: %w", errDeposed, j.err)
			d.hand(ctx, func() error { return err })
		case j.err == nil && j.res.Succeeded:
			d.log.Info("control plane failover: an assignment written", "shard", w.Shard.String(),
				"generation", w.Assignment.Generation, "leader", leader, "revision", j.res.Revision)
			d.reportPromotion(w, sent)
			d.hand(ctx, func() error { d.step(ctx, failover.WriteDone{Seq: w.Seq, Revision: j.res.Revision}); return nil })
		default:
			d.log.Info("control plane failover: a write not applied", "shard", w.Shard.String(),
				"generation", w.Assignment.Generation, "err", j.err)
			kv, ok := d.reread(ctx, w.Shard)
			if !ok {
				return
			}
			d.hand(ctx, func() error {
				d.step(ctx, failover.WriteFailed{Seq: w.Seq})
				if kv.Exists() {
					d.assignmentPut(ctx, w.Shard, kv)
				} else {
					d.removed(ctx, w.Shard)
				}
				return nil
			})
		}
	})
}

// reread reads a shard's key again after a failed write, until it is
// read or the term ends.
func (d *FailoverDriver) reread(ctx context.Context, id cluster.ShardID) (store.KV, bool) {
	for {
		kv, _, err := d.store.Get(ctx, AssignmentKey(id))
		if err == nil {
			return kv, true
		}
		d.log.Warn("control plane failover: an assignment not read again", "shard", id.String(), "err", err)
		select {
		case <-ctx.Done():
			return store.KV{}, false
		case <-time.After(d.lease / 8):
		}
	}
}
