package wire

// A frame type whose body the protocol bounds has a bound of its own,
// below frame_bytes_max: a receiver refuses a longer one as soon as its
// header is in, before it waits for (and holds) a body that can never be
// valid. A HELLO, say, may claim 4 MiB although its token and name make it
// at most about 8.5 KiB; a broker holding those 4 MiB for every
// connection that has not yet authenticated is memory anyone can pin.
//
// Only frames a client sends are bounded so: the broker's answers (lists,
// batches) keep frame_bytes_max, and control requests whose JSON carries a
// key or a list (CACHE_WATCH, GROUP_REDRIVE, PUBLISH_JSON) do too.

// ControlBytesMax bounds a JSON control request that carries only names,
// numbers and enumerations (SUBSCRIBE, STREAM_CREATE, ...): its largest
// honest encoding, every name at 255 bytes and escaped six bytes to one,
// is under 16 KiB; the rest is room for fields a later version adds.
const ControlBytesMax = 64 << 10

// frameBound says which bound a frame type has.
type frameBound uint8

const (
	boundFrame     frameBound = iota // frame_bytes_max
	boundHello                       // HELLO: versions, features, token, name
	boundPing                        // PING, PONG: one u64
	boundControl                     // a small JSON control request: ControlBytesMax
	boundPeerHello                   // PEER_HELLO: versions, features, a limit, a broker id
)

// helloFixedBytes is a HELLO's body less its token and name: two versions,
// the features, the token's u16 length and the name's u8 length.
const helloFixedBytes = 2 + 2 + 8 + 2 + 1

// FrameBytesFor is the largest frame of type t these limits accept, header
// included: frame_bytes_max, or less for a type the protocol bounds (see
// above). Never more than frame_bytes_max.
func (l Limits) FrameBytesFor(t Type) int {
	s, _ := specOf(t)
	return min(l.frameBytes(), s.bound.bytes(l))
}

func (b frameBound) bytes(l Limits) int {
	switch b {
	case boundHello:
		return HeaderSize + helloFixedBytes + l.tokenBytes() + l.nameBytes()
	case boundPing:
		return HeaderSize + 8
	case boundControl:
		return ControlBytesMax
	case boundPeerHello:
		return HeaderSize + peerHelloFixedBytes + l.nameBytes()
	}
	return l.frameBytes()
}
