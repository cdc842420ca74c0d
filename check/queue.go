package check

import "fmt"

// Publish is a publish of Value to Shard. Its Ok carries [Published].
type Publish struct {
	Shard Shard
	Value string
}

// Published is where a publish was acknowledged.
type Published struct {
	Offset uint64
}

// Read is one delivery to a subscription (a poll, or one batch pushed to
// it). Its Ok carries [Delivered]. A subscription is the sequence of the
// Reads with its Shard and Subscription, in the order they completed; it
// is owed every record from From on. A subscription that resumes from a
// position of its own (a reconnect that may deliver again) is a new
// Subscription name.
type Read struct {
	Shard        Shard
	Subscription string
	// From is the first offset the subscription is owed (0: the earliest);
	// the same in each of its Reads.
	From uint64
	// Final marks the reads made after the workload stopped, which must
	// hold every acknowledged record (else Unseen).
	Final bool
}

// Delivered is what one Read delivered, in delivery order.
type Delivered struct {
	Records []Record
}

// Record is one record delivered.
type Record struct {
	Offset uint64
	Value  string
}

func (p Publish) describe() string { return fmt.Sprintf("publish %s %q", p.Shard, p.Value) }
func (p Publish) accepts(out Output) bool {
	_, ok := out.(Published)
	return ok
}
func (p Published) describe() string { return fmt.Sprintf("at %d", p.Offset) }

func (r Read) describe() string {
	final := ""
	if r.Final {
		final = " final"
	}
	return fmt.Sprintf("read %s sub %q from %d%s", r.Shard, r.Subscription, r.From, final)
}
func (r Read) accepts(out Output) bool {
	_, ok := out.(Delivered)
	return ok
}

// recordsShownMax bounds the records an Op's description prints.
const recordsShownMax = 8

func (d Delivered) describe() string {
	s := fmt.Sprintf("%d records", len(d.Records))
	for i, rec := range d.Records {
		if i == recordsShownMax {
			return s + " ..."
		}
		s += fmt.Sprintf(" %d:%q", rec.Offset, rec.Value)
	}
	return s
}
