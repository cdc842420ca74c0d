package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// addGoldenSeeds adds every golden vector, a truncation of each, and the
// vectors back to back.
func addGoldenSeeds(f *testing.F, add func(frame []byte)) {
	var all []byte
	for _, c := range goldenCases() {
		add(c.frame)
		add(c.frame[:len(c.frame)/2])
		all = append(all, c.frame...)
	}
	add(all)
}

// FuzzDecodeFrame feeds arbitrary bytes through the Reader and every frame
// it finds through its decoder. Nothing may panic; a frame that decodes
// must re-encode, and its re-encoding must be a fixpoint.
func FuzzDecodeFrame(f *testing.F) {
	addGoldenSeeds(f, func(frame []byte) { f.Add(frame) })
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Reader{Limits: Limits{FrameBytesMax: 1 << 16, BatchRecordsMax: 64}}
		for len(data) > 0 {
			fr, need, err := r.Next(data)
			if err != nil {
				checkCoded(t, err)
				return
			}
			if need > 0 {
				return
			}
			checkRoundTrip(t, fr, r.Limits)
			data = data[fr.Size():]
		}
	})
}

// FuzzDecodeBody puts arbitrary bodies under every frame type and flag
// combination, reaching decoders the Reader's type check would keep
// random input away from.
func FuzzDecodeBody(f *testing.F) {
	addGoldenSeeds(f, func(frame []byte) {
		if len(frame) >= HeaderSize {
			f.Add(binary.LittleEndian.Uint16(frame[4:]), binary.LittleEndian.Uint16(frame[6:]), frame[HeaderSize:])
		}
	})
	f.Fuzz(func(t *testing.T, typ, flags uint16, body []byte) {
		fr := Frame{Type: Type(typ), Flags: Flags(flags), RequestID: 1, Body: body}
		if checkHeader(fr) != nil {
			return
		}
		checkRoundTrip(t, fr, Limits{BatchRecordsMax: 64})
	})
}

// checkCoded fails unless err carries a code of this protocol.
func checkCoded(t *testing.T, err error) {
	t.Helper()
	var c Code
	if !errors.As(err, &c) || !c.Known() {
		t.Fatalf("error without a known code: %v", err)
	}
}

func checkRoundTrip(t *testing.T, fr Frame, lim Limits) {
	t.Helper()
	model, err := decodeModel(fr, lim)
	if err != nil {
		checkCoded(t, err)
		return
	}
	once := encodeModel(nil, fr.RequestID, model)
	again, err := decodeModel(mustFrame(t, once), lim)
	if err != nil {
		t.Fatalf("%v: re-encoded frame does not decode: %v\n%x", fr.Type, err, once)
	}
	twice := encodeModel(nil, fr.RequestID, again)
	if !bytes.Equal(once, twice) {
		t.Fatalf("%v: encoding is not a fixpoint:\n%x\n%x", fr.Type, once, twice)
	}
}

func mustFrame(t *testing.T, b []byte) Frame {
	t.Helper()
	f, need, err := (&Reader{}).Next(b)
	if err != nil || need != 0 || f.Size() != len(b) {
		t.Fatalf("encoder wrote an unreadable frame (need %d, err %v): %x", need, err, b)
	}
	return f
}
