package wire

// The control frames of replication: FENCE, GENERATION_END, HEARTBEAT and
// LEASE_GRANT, laid out in replicate.go.

// Fence is a FENCE's fields.
type Fence struct {
	Log        LogRef
	Generation uint64
	Epoch      int64
}

// AppendFence appends a FENCE frame.
func AppendFence(dst []byte, requestID uint64, m Fence) []byte {
	dst, start := beginFrame(dst, TypeFence, 0, requestID)
	dst = appendLogRef(dst, m.Log)
	dst = appendU64(dst, m.Generation)
	dst = appendI64(dst, m.Epoch)
	return endFrame(dst, start)
}

// Decode reads a FENCE frame; Log's names alias it.
func (m *Fence) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeFence); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Log = c.logRef(lim.nameBytes())
	m.Generation = c.u64()
	m.Epoch = c.i64()
	return c.finish()
}

// The flags of a FENCE_OK.
const (
	FenceNewDisk uint8 = 0x01
	FenceClean   uint8 = 0x02
	fenceFlags         = FenceNewDisk | FenceClean
)

// FenceOK is a FENCE_OK's fields: the replica's real log after its own
// recovery, once the fence is durable.
type FenceOK struct {
	Generation uint64
	Epoch      int64
	LogEnd     int64
	LastGen    uint64
	Durable    int64
	Flags      uint8
	DiskID     []byte
}

// AppendFenceOK appends a FENCE_OK frame.
func AppendFenceOK(dst []byte, requestID uint64, m FenceOK) []byte {
	dst, start := beginFrame(dst, TypeFenceOK, 0, requestID)
	dst = appendU64(dst, m.Generation)
	dst = appendI64(dst, m.Epoch)
	dst = appendI64(dst, m.LogEnd)
	dst = appendU64(dst, m.LastGen)
	dst = appendI64(dst, m.Durable)
	dst = append(dst, m.Flags)
	dst = appendName(dst, m.DiskID)
	return endFrame(dst, start)
}

// Decode reads a FENCE_OK frame; DiskID aliases it.
func (m *FenceOK) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeFenceOK); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Generation = c.u64()
	m.Epoch = c.i64()
	m.LogEnd = c.i64()
	m.LastGen = c.u64()
	m.Durable = c.i64()
	m.Flags = c.u8()
	m.DiskID = c.name(lim.nameBytes())
	switch {
	case c.err != nil:
	case m.Flags&^fenceFlags != 0:
		c.fail(errBadEnum)
	case m.LogEnd < 0 || m.Durable < 0 || m.Durable > m.LogEnd:
		c.fail(errNegativeOffset)
	}
	return c.finish()
}

// GenerationEnd is a GENERATION_END's fields.
type GenerationEnd struct {
	Log       LogRef
	LeaderGen uint64
	Asked     uint64
}

// AppendGenerationEnd appends a GENERATION_END frame.
func AppendGenerationEnd(dst []byte, requestID uint64, m GenerationEnd) []byte {
	dst, start := beginFrame(dst, TypeGenerationEnd, 0, requestID)
	dst = appendLogRef(dst, m.Log)
	dst = appendU64(dst, m.LeaderGen)
	dst = appendU64(dst, m.Asked)
	return endFrame(dst, start)
}

// Decode reads a GENERATION_END frame; Log's names alias it.
func (m *GenerationEnd) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeGenerationEnd); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Log = c.logRef(lim.nameBytes())
	m.LeaderGen = c.u64()
	m.Asked = c.u64()
	return c.finish()
}

// GenerationEndOK is a GENERATION_END_OK's fields.
type GenerationEndOK struct {
	LeaderGen uint64
	End       int64
}

// AppendGenerationEndOK appends a GENERATION_END_OK frame.
func AppendGenerationEndOK(dst []byte, requestID uint64, m GenerationEndOK) []byte {
	dst, start := beginFrame(dst, TypeGenerationEndOK, 0, requestID)
	dst = appendU64(dst, m.LeaderGen)
	dst = appendI64(dst, m.End)
	return endFrame(dst, start)
}

// Decode reads a GENERATION_END_OK frame.
func (m *GenerationEndOK) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeGenerationEndOK); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.LeaderGen = c.u64()
	m.End = c.i64()
	if c.err == nil && m.End < 0 {
		c.fail(errNegativeOffset)
	}
	return c.finish()
}

// LogRead is a LOG_READ's fields.
type LogRead struct {
	Log      LogRef
	From     int64
	MaxBytes uint32
}

// AppendLogRead appends a LOG_READ frame.
func AppendLogRead(dst []byte, requestID uint64, m LogRead) []byte {
	dst, start := beginFrame(dst, TypeLogRead, 0, requestID)
	dst = appendLogRef(dst, m.Log)
	dst = appendI64(dst, m.From)
	dst = appendU32(dst, m.MaxBytes)
	return endFrame(dst, start)
}

// Decode reads a LOG_READ frame; Log's names alias it.
func (m *LogRead) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeLogRead); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Log = c.logRef(lim.nameBytes())
	m.From = c.i64()
	m.MaxBytes = c.u32()
	if c.err == nil && m.From < 0 {
		c.fail(errNegativeOffset)
	}
	return c.finish()
}
