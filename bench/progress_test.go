package bench

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestProgressLineUpdatesInPlace(t *testing.T) {
	rec := NewRecorder(2)
	start := newFakeClock().Now()
	var out bytes.Buffer
	p := NewProgress(&out, "fsync", rec, start)
	rec.Lane(0).Count(500, 50_000)
	p.Draw(start.Add(time.Second))
	want := "\rfsync  500 records  500 records/s  0.0500 MB/s  1.00s elapsed\x1b[K"
	if out.String() != want {
		t.Fatalf("first frame %q\nwant        %q", out.String(), want)
	}
	out.Reset()
	rec.Lane(1).Count(1500, 150_000)
	p.Draw(start.Add(2 * time.Second))
	// The rate is since the last frame; MB/s is over the whole run.
	want = "\rfsync  2.00k records  1.50k records/s  0.100 MB/s  2.00s elapsed\x1b[K"
	if out.String() != want {
		t.Fatalf("second frame %q\nwant         %q", out.String(), want)
	}
	out.Reset()
	p.Stop()
	p.Draw(start.Add(3 * time.Second))
	p.Stop()
	if out.String() != "\r\x1b[K" {
		t.Errorf("after Stop: %q, want the line erased once and nothing more", out.String())
	}
}

func TestStartedProgressStops(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out, "x", NewRecorder(1), time.Now())
	p.Start(time.Hour)
	p.Start(time.Hour) // a second Start is ignored
	p.Stop()
	if out.String() != "\r\x1b[K" {
		t.Errorf("output %q, want only the erase", out.String())
	}
}

func TestNilProgressDoesNothing(t *testing.T) {
	var p *Progress
	p.Start(time.Millisecond)
	p.Draw(time.Now())
	p.Stop()
}

func TestNoProgressOnAPipeOrUnderCI(t *testing.T) {
	t.Setenv("CI", "")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if ProgressEnabled(w) || ProgressFor(w, "x", NewRecorder(1)) != nil || ProgressTo(w) != nil {
		t.Error("progress enabled on a pipe")
	}
	if ProgressEnabled(nil) {
		t.Error("progress enabled on no file")
	}
}
