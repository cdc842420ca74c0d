package cluster

import "fmt"

// done records what a write or delete left in the store. The answer to a
// write sent before the last Resync is not known, and is ignored.
func (m *Machine) done(ev WriteDone) error {
	w, ok := m.sent[ev.Seq]
	if !ok {
		return nil
	}
	if w.write && ev.Revision <= 0 {
		return fmt.Errorf("%w: write %d of %v done at revision %d", ErrInvalidEvent, ev.Seq, w.shard, ev.Revision)
	}
	delete(m.sent, ev.Seq)
	s := m.shards[w.shard]
	s.sending = 0
	if w.write {
		s.stored, s.revision = w.assignment, ev.Revision
	} else {
		s.stored, s.revision = Assignment{}, 0
	}
	m.dirty[w.shard] = struct{}{}
	return nil
}

// failed gives up on what the machine believes is stored: someone else
// wrote (the compare failed) or the outcome is unknown. Rewriting blindly
// could undo the other write, so it asks for the store's state instead.
func (m *Machine) failed(ev WriteFailed) {
	if _, ok := m.sent[ev.Seq]; !ok {
		return
	}
	m.synced = false
	clear(m.sent)
	clear(m.dirty)
	m.actions = append(m.actions, Resync{})
}
