package wire

import "encoding/binary"

// AckRun says that Count records of a publish landed on Shard at offsets
// FirstOffset, FirstOffset+1, ... in the order they were sent. Records of a
// keyed batch that went to different shards are acknowledged in different
// runs.
type AckRun struct {
	Shard       uint32
	FirstOffset uint64
	Count       uint32
}

const ackRunBytes = 16

// PublishAck is a decoded PUBLISH_ACK; Run reads the runs in place.
//
//	u16 run count (>= 1) | run * count
//	run: u32 shard | u64 first offset | u32 count (>= 1)
type PublishAck struct {
	runs []byte
}

// AppendPublishAck appends a PUBLISH_ACK frame. runs must not be empty.
func AppendPublishAck(dst []byte, requestID uint64, runs ...AckRun) []byte {
	if len(runs) == 0 || len(runs) > 1<<16-1 {
		panic("felix/wire: a PUBLISH_ACK carries 1 to 65,535 runs")
	}
	dst, start := beginFrame(dst, TypePublishAck, 0, requestID)
	dst = appendU16(dst, uint16(len(runs)))
	for _, r := range runs {
		dst = appendU32(dst, r.Shard)
		dst = appendU64(dst, r.FirstOffset)
		dst = appendU32(dst, r.Count)
	}
	return endFrame(dst, start)
}

// Decode reads a PUBLISH_ACK frame; a keeps aliasing it.
func (a *PublishAck) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypePublishAck); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	n := int(c.u16())
	if c.err == nil && n == 0 {
		c.fail(errEmptyBatch)
	}
	if c.err == nil && n > lim.batchRecords() {
		c.fail(&LimitError{Limit: LimitBatchRecords, Max: lim.batchRecords(), Got: uint64(n)})
	}
	a.runs = c.take(n * ackRunBytes)
	if err := c.finish(); err != nil {
		a.runs = nil
		return err
	}
	for i := range a.Len() {
		if a.Run(i).Count == 0 {
			a.runs = nil
			return errEmptyBatch
		}
	}
	return nil
}

// Len is the number of runs.
func (a *PublishAck) Len() int { return len(a.runs) / ackRunBytes }

// Run is run i, 0 <= i < Len.
func (a *PublishAck) Run(i int) AckRun {
	b := a.runs[i*ackRunBytes : (i+1)*ackRunBytes]
	return AckRun{
		Shard:       binary.LittleEndian.Uint32(b),
		FirstOffset: binary.LittleEndian.Uint64(b[4:]),
		Count:       binary.LittleEndian.Uint32(b[12:]),
	}
}

// Records is the number of records the runs acknowledge together.
func (a *PublishAck) Records() uint64 {
	var n uint64
	for i := range a.Len() {
		n += uint64(a.Run(i).Count)
	}
	return n
}

// IdempotentAck answers a PUBLISH_IDEMPOTENT.
//
//	u32 shard | u64 producer id | u32 epoch | u64 sequence |
//	u64 first offset | u32 count | u8 duplicate (0 or 1)
type IdempotentAck struct {
	ProducerSeq
	FirstOffset uint64
	Count       uint32
	// Duplicate: the leader already held this sequence and answered from
	// memory; nothing was appended this time.
	Duplicate bool
}

// AppendPublishIdempotentAck appends a PUBLISH_IDEMPOTENT_ACK frame.
func AppendPublishIdempotentAck(dst []byte, requestID uint64, a IdempotentAck) []byte {
	dst, start := beginFrame(dst, TypePublishIdempotentAck, 0, requestID)
	dst = appendProducerSeq(dst, a.ProducerSeq)
	dst = appendU64(dst, a.FirstOffset)
	dst = appendU32(dst, a.Count)
	dst = appendBool(dst, a.Duplicate)
	return endFrame(dst, start)
}

// Decode reads a PUBLISH_IDEMPOTENT_ACK frame.
func (a *IdempotentAck) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypePublishIdempotentAck); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	a.ProducerSeq = c.producerSeq()
	a.FirstOffset = c.u64()
	a.Count = c.u32()
	a.Duplicate = c.bool8()
	return c.finish()
}
