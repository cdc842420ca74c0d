package broker

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/replica"
)

// AckJournalEnv names the environment variable `felix serve` reads
// ClusterConfig.AckJournal from. For tests only (the real-process
// nemeses): a broker in production never sets it.
const AckJournalEnv = "FELIX_ACK_JOURNAL"

// Bounds of an ack journal's buffer: it is written out every
// ackJournalFlushEvery, and at once when it holds ackJournalBufferBytes.
// A kill -9 loses what was journaled since the last write (at most
// ackJournalFlushEvery of acknowledgements and promotions): a write(2) to
// the file is in the kernel's page cache, which outlives the process.
const (
	ackJournalFlushEvery  = 20 * time.Millisecond
	ackJournalBufferBytes = 64 << 10
)

// ackJournal is a test's record of what this broker acknowledged and
// which promotions its control plane began (ClusterConfig.AckJournal):
// one JournalEntry a line, in a file of this process's own. Its methods
// are safe for concurrent use (one mutex, held to append a line or write
// the buffer); a goroutine of its own writes the buffer out. Once closed,
// what is journaled is dropped.
type ackJournal struct {
	broker string
	clock  monoClock

	mu     sync.Mutex
	f      *os.File
	buf    []byte
	err    error // the first failed write: the journal stops there
	closed bool

	stop chan struct{}
	done chan struct{}
}

// ackJournalPath is the file of this process's journal under prefix.
func ackJournalPath(prefix, broker string, pid int) string {
	return fmt.Sprintf("%s.%s.%d.jsonl", prefix, broker, pid)
}

// openAckJournal creates this process's journal file under prefix and
// starts its writer.
func openAckJournal(prefix, broker string) (*ackJournal, error) {
	clock, err := newMonoClock()
	if err != nil {
		return nil, fmt.Errorf("felix/broker: ack journal: %w", err)
	}
	path := ackJournalPath(prefix, broker, os.Getpid())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("felix/broker: ack journal: %w", err)
	}
	j := &ackJournal{broker: broker, clock: clock, f: f, stop: make(chan struct{}), done: make(chan struct{})}
	go j.flushEvery(ackJournalFlushEvery)
	return j, nil
}

// ack journals one acknowledgement (replica.NodeConfig.OnAck).
func (j *ackJournal) ack(a replica.AckReport) {
	id := cluster.ObjectID{Kind: cluster.Kind(a.Ref.Kind), Tenant: string(a.Ref.Tenant), Namespace: string(a.Ref.Namespace), Name: string(a.Ref.Name)}
	j.add(JournalEntry{Kind: JournalAck, Broker: j.broker, Object: id.String(), Shard: a.Ref.Shard, Part: string(a.Ref.Part),
		Generation: a.Generation, First: a.First, Last: a.Last,
		Time: j.clock.of(a.At), Until: j.clock.of(a.Until), Lease: int64(a.Lease)})
}

// promotion journals a promotion's start (control.ControllerConfig.OnPromotion).
func (j *ackJournal) promotion(p control.PromotionReport) {
	j.add(JournalEntry{Kind: JournalPromotion, Broker: j.broker, Object: p.Shard.Object.String(), Shard: uint32(p.Shard.Shard),
		Generation: p.Generation, Time: j.clock.of(p.Sent)})
}

func (j *ackJournal) add(e JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || j.err != nil {
		return
	}
	j.buf = e.append(j.buf)
	if len(j.buf) >= ackJournalBufferBytes {
		j.writeLocked()
	}
}

// writeLocked writes the buffer out: whole lines only, so that a kill
// between two writes leaves no line torn.
func (j *ackJournal) writeLocked() {
	if len(j.buf) == 0 || j.err != nil {
		return
	}
	_, j.err = j.f.Write(j.buf)
	j.buf = j.buf[:0]
}

func (j *ackJournal) flushEvery(d time.Duration) {
	defer close(j.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
			j.mu.Lock()
			j.writeLocked()
			j.mu.Unlock()
		}
	}
}

// close writes out what is buffered and closes the file; it reports the
// first write that failed. Safe on a nil journal (none configured).
func (j *ackJournal) close() error {
	if j == nil {
		return nil
	}
	close(j.stop)
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	j.writeLocked()
	j.closed = true
	if err := j.f.Close(); j.err == nil {
		j.err = err
	}
	if j.err != nil {
		return fmt.Errorf("felix/broker: ack journal: %w", j.err)
	}
	return nil
}

// openJournal opens ClusterConfig.AckJournal's journal, if one is set.
func (n *node) openJournal() error {
	if n.cfg.AckJournal == "" {
		return nil
	}
	j, err := openAckJournal(n.cfg.AckJournal, n.cfg.BrokerID)
	if err != nil {
		return err
	}
	n.journal = j
	n.logger.Warn("journaling every acknowledgement and promotion, for a test", "prefix", n.cfg.AckJournal)
	return nil
}

// onAck is the replica node's OnAck: nil without a journal.
func (j *ackJournal) onAck() func(replica.AckReport) {
	if j == nil {
		return nil
	}
	return j.ack
}

// onPromotion is the control plane's OnPromotion: nil without a journal.
func (j *ackJournal) onPromotion() func(control.PromotionReport) {
	if j == nil {
		return nil
	}
	return j.promotion
}
