package wire

import "testing"

// The baseline is a plain copy of the same bytes: the codec's cost is read
// as a multiple of moving the payload once.

func benchFrame(b *testing.B, frame []byte, fn func(dst []byte) []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	dst := make([]byte, 0, len(frame))
	for b.Loop() {
		dst = fn(dst[:0])
	}
}

func BenchmarkBaselineCopy100KiB(b *testing.B) {
	src := AppendPublishBatch(nil, 1, gRef, AckPerBatch, batch100(true))
	benchFrame(b, src, func(dst []byte) []byte { return append(dst, src...) })
}

func BenchmarkEncodePublishBatch100x1KiB(b *testing.B) {
	recs := batch100(true)
	frame := AppendPublishBatch(nil, 1, gRef, AckPerBatch, recs)
	benchFrame(b, frame, func(dst []byte) []byte { return AppendPublishBatch(dst, 1, gRef, AckPerBatch, recs) })
}

func BenchmarkDecodePublishBatch100x1KiB(b *testing.B) {
	frame := AppendPublishBatch(nil, 1, gRef, AckPerBatch, batch100(true))
	benchDecode(b, frame, func(f Frame) int {
		var p Publish
		if err := p.Decode(f, Limits{}); err != nil {
			b.Fatal(err)
		}
		n := 0
		for it := p.Records(); it.Next(); {
			n += len(it.Record().Value)
		}
		return n
	})
}

func BenchmarkEncodePublishJSON100x1KiB(b *testing.B) {
	recs := batch100(true)
	frame := AppendPublishJSON(nil, 1, gRef, AckPerBatch, nil, recs)
	benchFrame(b, frame, func(dst []byte) []byte { return AppendPublishJSON(dst, 1, gRef, AckPerBatch, nil, recs) })
}

func BenchmarkDecodePublishJSON100x1KiB(b *testing.B) {
	frame := AppendPublishJSON(nil, 1, gRef, AckPerBatch, nil, batch100(true))
	var p Publish // reused, as the server would
	benchDecode(b, frame, func(f Frame) int {
		if err := p.Decode(f, Limits{}); err != nil {
			b.Fatal(err)
		}
		return p.Count
	})
}

func BenchmarkEncodeEventBatch100x1KiB(b *testing.B) {
	evs := events100()
	frame := AppendEventBatch(nil, 0, 7, 1, evs)
	benchFrame(b, frame, func(dst []byte) []byte { return AppendEventBatch(dst, 0, 7, 1, evs) })
}

func BenchmarkDecodeEventBatch100x1KiB(b *testing.B) {
	frame := AppendEventBatch(nil, 0, 7, 1, events100())
	benchDecode(b, frame, func(f Frame) int {
		var e EventBatch
		if err := e.Decode(f, Limits{}); err != nil {
			b.Fatal(err)
		}
		n := 0
		for it := e.Events(); it.Next(); {
			n += len(it.Event().Value)
		}
		return n
	})
}

func BenchmarkEncodePublish1KiB(b *testing.B) {
	rec := Record{Key: []byte("user-1"), Value: kib(1)}
	frame := AppendPublish(nil, 1, gRef, AckPerMessage, rec)
	benchFrame(b, frame, func(dst []byte) []byte { return AppendPublish(dst, 1, gRef, AckPerMessage, rec) })
}

func BenchmarkDecodePublish1KiB(b *testing.B) {
	frame := AppendPublish(nil, 1, gRef, AckPerMessage, Record{Key: []byte("user-1"), Value: kib(1)})
	benchDecode(b, frame, func(f Frame) int {
		var p Publish
		if err := p.Decode(f, Limits{}); err != nil {
			b.Fatal(err)
		}
		it := p.Records()
		it.Next()
		return len(it.Record().Value)
	})
}

// benchDecode times Reader.Next plus the body decoder, as a server loop
// runs them.
func benchDecode(b *testing.B, frame []byte, decode func(Frame) int) {
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	var r Reader
	sink := 0
	for b.Loop() {
		f, _, err := r.Next(frame)
		if err != nil {
			b.Fatal(err)
		}
		sink += decode(f)
	}
	if sink == 0 {
		b.Fatal("nothing decoded")
	}
}
