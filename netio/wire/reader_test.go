package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestReaderFindsEveryFrameInAStreamFedByteByByte(t *testing.T) {
	cases := goldenCases()
	var stream []byte
	for _, c := range cases {
		stream = append(stream, c.frame...)
	}
	var r Reader
	start, i := 0, 0
	for end := start; end <= len(stream) && i < len(cases); end++ {
		f, need, err := r.Next(stream[start:end])
		if err != nil {
			t.Fatalf("frame %d (%s): %v", i, cases[i].name, err)
		}
		have, size := end-start, len(cases[i].frame)
		if have < size {
			want := size - have
			if have < lengthFieldSize {
				want = HeaderSize - have
			}
			if need != want {
				t.Fatalf("%s with %d of %d bytes: need %d, want %d", cases[i].name, have, size, need, want)
			}
			continue
		}
		if need != 0 || f.Size() != size || !bytes.Equal(stream[start:start+size], cases[i].frame) {
			t.Fatalf("%s: need %d, size %d, want %d", cases[i].name, need, f.Size(), size)
		}
		start, i = start+size, i+1
	}
	if i != len(cases) {
		t.Fatalf("found %d of %d frames", i, len(cases))
	}
}

func lengthOnly(total uint64) []byte {
	return binary.LittleEndian.AppendUint32(nil, uint32(total-lengthFieldSize))
}

func TestReaderRefusesAnOversizedFrameFromItsLengthAlone(t *testing.T) {
	var r Reader
	_, need, err := r.Next(lengthOnly(DefaultFrameBytesMax + 1))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitFrameBytes || le.Max != DefaultFrameBytesMax || need != 0 {
		t.Fatalf("need %d, err %v", need, err)
	}
	if !errors.Is(err, CodeFrameTooLarge) || errors.Is(err, CodeLimitExceeded) {
		t.Fatalf("%v does not unwrap to frame_too_large alone", err)
	}
	if _, need, err := r.Next(lengthOnly(DefaultFrameBytesMax)); err != nil || need != DefaultFrameBytesMax-4 {
		t.Fatalf("a frame of exactly the maximum: need %d, err %v", need, err)
	}
}

func TestReaderFrameLimitIsConfigurable(t *testing.T) {
	r := Reader{Limits: Limits{FrameBytesMax: 64}}
	small := AppendPing(nil, 1, 2)
	if _, _, err := r.Next(small); err != nil {
		t.Fatal(err)
	}
	big := AppendPublish(nil, 1, gRef, AckNone, Record{Value: make([]byte, 64)})
	if _, _, err := r.Next(big[:4]); !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("a %d-byte frame under a 64-byte limit: %v", len(big), err)
	}
}

func TestReaderRefusesALengthShorterThanTheHeader(t *testing.T) {
	var r Reader
	for _, length := range []uint32{0, 1, lengthMin - 1} {
		buf := binary.LittleEndian.AppendUint32(nil, length)
		if _, _, err := r.Next(buf); !errors.Is(err, CodeMalformedFrame) {
			t.Errorf("length %d: %v", length, err)
		}
	}
}

func TestReaderNamesTheRequestOfAnUnknownFrameType(t *testing.T) {
	frame := AppendFrame(nil, Type(0x0777), 0, 99, []byte{1, 2, 3})
	f, need, err := (&Reader{}).Next(frame)
	if !errors.Is(err, CodeUnknownFrameType) || f.RequestID != 99 || need != 0 {
		t.Fatalf("request %d, need %d, err %v", f.RequestID, need, err)
	}
}

func TestReaderRefusesFlagsTheTypeDoesNotDefine(t *testing.T) {
	var r Reader
	for _, f := range []Frame{
		{Type: TypeOK, Flags: FlagKeyed},
		{Type: TypePublish, Flags: 0x0002},
		{Type: TypeEventBatch, Flags: FlagTimestamp},
	} {
		frame := AppendFrame(nil, f.Type, f.Flags, 5, nil)
		if got, _, err := r.Next(frame); !errors.Is(err, CodeMalformedFrame) || got.RequestID != 5 {
			t.Errorf("%v with flags %#x: %v", f.Type, f.Flags, err)
		}
	}
}

func TestReaderBodyCannotBeAppendedIntoTheNextFrame(t *testing.T) {
	two := AppendPing(AppendPing(nil, 1, 1), 2, 2)
	f, _, _ := (&Reader{}).Next(two)
	_ = append(f.Body, 0xff)
	g, _, err := (&Reader{}).Next(two[f.Size():])
	var p Ping
	if err != nil || p.Decode(g, Limits{}) != nil || p.Payload != 2 {
		t.Fatalf("second frame damaged: %x", two[f.Size():])
	}
}

func TestEveryFrameTypeHasANameAndSpecsAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, typ := range Types() {
		name := typ.String()
		if seen[name] || !typ.Known() {
			t.Errorf("%v: duplicate or unknown", typ)
		}
		seen[name] = true
		if typ.JSON() != (NewControl(typ) != nil || typ == TypePublishJSON) {
			t.Errorf("%v: JSON body without a Control type, or the reverse", typ)
		}
	}
	if Type(0x0099).Known() || Type(0x0800).Known() || Type(0xffff).String() != "TYPE(0xffff)" {
		t.Error("unknown types reported as known")
	}
}

func TestReaderRefusesAFrameOverItsTypesBoundFromItsHeaderAlone(t *testing.T) {
	var r Reader
	header := AppendFrame(nil, TypeHello, 0, 7, nil)
	binary.LittleEndian.PutUint32(header, DefaultFrameBytesMax-lengthFieldSize)
	f, need, err := r.Next(header)
	var le *LimitError
	helloMax := Limits{}.FrameBytesFor(TypeHello)
	if !errors.As(err, &le) || le.Limit != LimitFrameBytes || le.Max != helloMax || need != 0 || f.RequestID != 7 {
		t.Fatalf("a 4 MiB HELLO header: need %d, request %d, err %v", need, f.RequestID, err)
	}
	if !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("%v does not unwrap to frame_too_large", err)
	}
	binary.LittleEndian.PutUint32(header, DefaultFrameBytesMax-lengthFieldSize)
	binary.LittleEndian.PutUint16(header[4:], uint16(TypePublishBatch))
	if f, need, err := r.Next(header); err != nil || need != DefaultFrameBytesMax-HeaderSize || f.Type != TypePublishBatch || f.Body != nil {
		t.Fatalf("a 4 MiB PUBLISH_BATCH header: %v, need %d, err %v", f.Type, need, err)
	}
}

func TestTheLargestHelloFitsItsBoundAndOneByteMoreDoesNot(t *testing.T) {
	lim := Limits{}.Effective()
	biggest := AppendHello(nil, 1, Hello{VersionMin: 1, VersionMax: 1, Features: FeaturesAll,
		Token: bytes.Repeat([]byte{'t'}, lim.TokenBytesMax), ClientName: bytes.Repeat([]byte{'n'}, lim.NameBytesMax)})
	if len(biggest) != lim.FrameBytesFor(TypeHello) {
		t.Fatalf("the largest HELLO is %d bytes, its bound %d", len(biggest), lim.FrameBytesFor(TypeHello))
	}
	var h Hello
	if err := h.Decode(mustFrame(t, biggest), lim); err != nil {
		t.Fatal(err)
	}
	over := append(biggest, 0)
	binary.LittleEndian.PutUint32(over, uint32(len(over)-lengthFieldSize))
	if _, _, err := (&Reader{}).Next(over[:HeaderSize]); !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("a HELLO one byte over its bound: %v", err)
	}
}

func TestAPingIsBoundToItsPayload(t *testing.T) {
	ping := AppendFrame(nil, TypePing, 0, 3, make([]byte, 9))
	if _, _, err := (&Reader{}).Next(ping[:HeaderSize]); !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("a PING of 9 payload bytes: %v", err)
	}
	if got := (Limits{}).FrameBytesFor(TypePong); got != len(AppendPong(nil, 1, 1)) {
		t.Fatalf("PONG bound %d", got)
	}
}

func TestASmallControlRequestIsBoundAndNoTypeAboveTheFrameLimit(t *testing.T) {
	if got := (Limits{}).FrameBytesFor(TypeSubscribe); got != ControlBytesMax {
		t.Fatalf("SUBSCRIBE bound %d", got)
	}
	for _, typ := range []Type{TypeGroupRedrive, TypeCacheWatch, TypePublishJSON, TypeStreamListResult, TypePublishBatch} {
		if got := (Limits{}).FrameBytesFor(typ); got != DefaultFrameBytesMax {
			t.Errorf("%v bound %d, want frame_bytes_max", typ, got)
		}
	}
	small := Limits{FrameBytesMax: 1000}
	for _, typ := range Types() {
		if got := small.FrameBytesFor(typ); got > 1000 {
			t.Errorf("%v bound %d over a frame limit of 1000", typ, got)
		}
	}
}

func TestReaderRefusesAnUnknownTypeFromItsHeaderAlone(t *testing.T) {
	frame := AppendFrame(nil, Type(0x0777), 0, 98, make([]byte, 100))
	f, _, err := (&Reader{}).Next(frame[:HeaderSize])
	if !errors.Is(err, CodeUnknownFrameType) || f.RequestID != 98 {
		t.Fatalf("request %d, err %v", f.RequestID, err)
	}
}
