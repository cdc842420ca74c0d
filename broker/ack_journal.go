package broker

import (
	"fmt"
	"os"
	"sync"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/replica"
)

// AckJournalEnv names the environment variable `felix serve` reads
// ClusterConfig.AckJournal from. For tests only (the real-process
// nemeses): a broker in production never sets it.
const AckJournalEnv = "FELIX_ACK_JOURNAL"

// ackJournal is a test's record of what this broker acknowledged and
// which promotions its control plane began (ClusterConfig.AckJournal):
// one JournalEntry a line, in a file of this process's own. Each line is
// written (one write(2), into the kernel's page cache, which outlives the
// process) before the acknowledgement it records is sent, so a kill -9
// loses none an ack's receiver saw; the most it leaves is a last line
// torn by a write under way (ReadAckJournal drops it), whose ack was
// never sent. Safe for concurrent use: one mutex, held to encode and
// write a line. Once closed, what is journaled is dropped.
type ackJournal struct {
	broker string
	clock  monoClock

	mu     sync.Mutex
	f      *os.File
	buf    []byte // the line being written
	err    error  // the first failed write: the journal stops there
	closed bool
}

// ackJournalPath is the file of this process's journal under prefix.
func ackJournalPath(prefix, broker string, pid int) string {
	return fmt.Sprintf("%s.%s.%d.jsonl", prefix, broker, pid)
}

// openAckJournal creates this process's journal file under prefix.
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
	return &ackJournal{broker: broker, clock: clock, f: f}, nil
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
	j.buf = e.append(j.buf[:0])
	_, j.err = j.f.Write(j.buf)
}

// close closes the file; it reports the first write that failed. Safe
// on a nil journal (none configured).
func (j *ackJournal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
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
