package group

// slotState is where one handed-out record stands.
type slotState uint8

const (
	slotLoose   slotState = iota // between two states, under the group's lock
	slotClaimed                  // held by a consumer until its claim's deadline
	slotOwed                     // to be delivered again, not before until
	slotDying                    // its dead letter is appended, not yet durable
	slotDone                     // finished: acked, dead-lettered, skipped, or a control record
)

// slot is one handed-out record of a group: in the window, or redriven.
type slot struct {
	until      int64     // claimed: the claim's deadline; owed: not before (clock ns)
	holder     *consumer // set while claimed
	logOffset  int64     // dying, or redriven: the dead-letter log record that says so
	deliveries uint32
	state      slotState
}

// window is the slots of [cursor, next), oldest first, in a ring that
// grows by doubling up to its bound and never shrinks.
type window struct {
	slots []slot
	head  int
	n     int
}

func (w *window) len() int { return w.n }

// at returns the slot i places after the cursor; i < len.
func (w *window) at(i int) *slot { return &w.slots[(w.head+i)&(len(w.slots)-1)] }

// push adds a slot at the far end.
func (w *window) push(s slot) {
	if w.n == len(w.slots) {
		w.grow()
	}
	w.slots[(w.head+w.n)&(len(w.slots)-1)] = s
	w.n++
}

// pop drops the slot at the cursor.
func (w *window) pop() {
	w.slots[w.head] = slot{}
	w.head = (w.head + 1) & (len(w.slots) - 1)
	w.n--
}

func (w *window) grow() {
	next := make([]slot, max(64, 2*len(w.slots)))
	for i := range w.n {
		next[i] = *w.at(i)
	}
	w.slots, w.head = next, 0
}

// consumer is one consumer name of a group, interned, with the claims it
// holds.
type consumer struct {
	name   string
	claims int
}
