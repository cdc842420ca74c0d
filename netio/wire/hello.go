package wire

// Hello is the client's first frame.
//
//	u16 version min | u16 version max | u64 features |
//	u16 token len | token | u8 name len | client name
type Hello struct {
	VersionMin uint16
	VersionMax uint16
	Features   Features
	Token      []byte // auth token; empty for none. At most Limits.TokenBytesMax.
	ClientName []byte // for logs and metrics. At most Limits.NameBytesMax.
}

// HelloOK is the broker's answer: what the session may use.
//
//	u16 version | u64 features | u8 len | broker id |
//	u32 frame_bytes_max | u32 batch_records_max | u32 key_bytes_max |
//	u32 name_bytes_max | u32 token_bytes_max |
//	u32 inflight_requests_max | u32 idle_timeout_ms
type HelloOK struct {
	Version  uint16
	Features Features // the intersection of both peers' features
	BrokerID []byte
	// Limits are the broker's; the client encodes within them and decodes
	// the broker's frames with them.
	Limits Limits
	// InflightRequestsMax bounds requests awaiting an answer on the
	// session; 0 is no bound.
	InflightRequestsMax uint32
	// IdleTimeoutMillis is how long the broker keeps a silent connection;
	// 0 is for ever. A client pings well within it.
	IdleTimeoutMillis uint32
}

// AppendHello appends a HELLO frame.
func AppendHello(dst []byte, requestID uint64, h Hello) []byte {
	if len(h.Token) > tokenBytesCap {
		panic("felix/wire: auth token longer than 65,535 bytes")
	}
	dst, start := beginFrame(dst, TypeHello, 0, requestID)
	dst = appendU16(dst, h.VersionMin)
	dst = appendU16(dst, h.VersionMax)
	dst = appendU64(dst, uint64(h.Features))
	dst = appendU16(dst, uint16(len(h.Token)))
	dst = append(dst, h.Token...)
	dst = appendName(dst, h.ClientName)
	return endFrame(dst, start)
}

// Decode reads a HELLO frame; the slices alias it.
func (h *Hello) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeHello); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	h.VersionMin = c.u16()
	h.VersionMax = c.u16()
	h.Features = Features(c.u64())
	n := c.u16()
	if c.err == nil && int(n) > lim.tokenBytes() {
		c.fail(&LimitError{Limit: LimitTokenBytes, Max: lim.tokenBytes(), Got: uint64(n)})
	}
	h.Token = c.take(int(n))
	h.ClientName = c.name(lim.nameBytes())
	return c.finish()
}

// AppendHelloOK appends a HELLO_OK frame. The limits are sent as in force
// (Limits.Effective).
func AppendHelloOK(dst []byte, requestID uint64, h HelloOK) []byte {
	dst, start := beginFrame(dst, TypeHelloOK, 0, requestID)
	dst = appendU16(dst, h.Version)
	dst = appendU64(dst, uint64(h.Features))
	dst = appendName(dst, h.BrokerID)
	l := h.Limits.Effective()
	for _, v := range [...]int{l.FrameBytesMax, l.BatchRecordsMax, l.KeyBytesMax, l.NameBytesMax, l.TokenBytesMax} {
		dst = appendU32(dst, uint32(v))
	}
	dst = appendU32(dst, h.InflightRequestsMax)
	dst = appendU32(dst, h.IdleTimeoutMillis)
	return endFrame(dst, start)
}

// Decode reads a HELLO_OK frame; BrokerID aliases it. A limit of 0 on the
// wire reads as the default, as Limits does.
func (h *HelloOK) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeHelloOK); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	h.Version = c.u16()
	h.Features = Features(c.u64())
	h.BrokerID = c.name(lim.nameBytes())
	h.Limits = Limits{
		FrameBytesMax:   int(c.u32()),
		BatchRecordsMax: int(c.u32()),
		KeyBytesMax:     int(c.u32()),
		NameBytesMax:    int(c.u32()),
		TokenBytesMax:   int(c.u32()),
	}.Effective()
	h.InflightRequestsMax = c.u32()
	h.IdleTimeoutMillis = c.u32()
	return c.finish()
}
