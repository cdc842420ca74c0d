package wire

// AckMode says when, and how often, a publish is answered.
type AckMode uint8

const (
	// AckNone: no PUBLISH_ACK. A refusal is still answered with ERROR.
	AckNone AckMode = 0
	// AckPerMessage: a PUBLISH_ACK as each run of records becomes durable,
	// possibly several per request; their counts add up to the batch.
	AckPerMessage AckMode = 1
	// AckPerBatch: one PUBLISH_ACK once every record is durable.
	AckPerBatch AckMode = 2
)

var ackNames = [...]string{"none", "per_message", "per_batch"}

func (a AckMode) valid() bool { return int(a) < len(ackNames) }

func (a AckMode) String() string {
	if a.valid() {
		return ackNames[a]
	}
	return "ack_" + utoa(uint64(a))
}

// MarshalText writes the JSON name: "none", "per_message", "per_batch".
func (a AckMode) MarshalText() ([]byte, error) {
	if !a.valid() {
		return nil, errBadEnum
	}
	return []byte(ackNames[a]), nil
}

// UnmarshalText reads the JSON name.
func (a *AckMode) UnmarshalText(b []byte) error {
	for i, n := range ackNames {
		if string(b) == n {
			*a = AckMode(i)
			return nil
		}
	}
	return errBadEnum
}

// Record is one record to publish. Key and Value alias the frame when
// decoded.
type Record struct {
	// Key routes the record (xxh3(key) mod shards); empty means no key:
	// shard 0. It travels only under FlagKeyed.
	Key   []byte `json:"key,omitempty"`
	Value []byte `json:"value"`
	// Timestamp is unix nanoseconds; 0 lets the broker stamp it. It travels
	// only under FlagTimestamp.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// ProducerSeq identifies an idempotent batch: the producer (from
// PRODUCER_INIT), its epoch, and the batch's sequence number, per producer
// per shard, counting from 0. The leader appends a sequence once and answers
// a re-send of one it holds from memory.
type ProducerSeq struct {
	Shard      uint32 `json:"shard"`
	ProducerID uint64 `json:"producer_id"`
	Epoch      uint32 `json:"epoch"`
	Sequence   uint64 `json:"sequence"`
}

// RecordFlags is the header flags a batch of these records needs:
// FlagKeyed if any has a key, FlagTimestamp if any has a timestamp.
func RecordFlags(recs ...Record) Flags {
	var f Flags
	for i := range recs {
		if len(recs[i].Key) != 0 {
			f |= FlagKeyed
		}
		if recs[i].Timestamp != 0 {
			f |= FlagTimestamp
		}
	}
	return f
}

// minRecordBytes is the smallest record under flags: a zero value length,
// plus the timestamp and a zero key length when present.
func minRecordBytes(flags Flags) int {
	n := 1
	if flags&FlagTimestamp != 0 {
		n += 8
	}
	if flags&FlagKeyed != 0 {
		n++
	}
	return n
}

func appendRecord(b []byte, flags Flags, r Record) []byte {
	if flags&FlagTimestamp != 0 {
		b = appendI64(b, r.Timestamp)
	} else if r.Timestamp != 0 {
		panic("felix/wire: a record with a timestamp in a frame without FlagTimestamp")
	}
	if flags&FlagKeyed != 0 {
		b = appendBlob(b, r.Key)
	} else if len(r.Key) != 0 {
		panic("felix/wire: a record with a key in a frame without FlagKeyed")
	}
	return appendBlob(b, r.Value)
}

func (c *cursor) record(flags Flags, keyBytesMax int) Record {
	var r Record
	if flags&FlagTimestamp != 0 {
		r.Timestamp = c.i64()
	}
	if flags&FlagKeyed != 0 {
		r.Key = c.key(keyBytesMax)
	}
	r.Value = c.blob()
	return r
}

func (c *cursor) ackMode() AckMode {
	a := AckMode(c.u8())
	if !a.valid() {
		c.fail(errBadEnum)
	}
	return a
}

func appendAck(b []byte, a AckMode) []byte {
	if !a.valid() {
		panic("felix/wire: unknown AckMode " + a.String())
	}
	return append(b, byte(a))
}
