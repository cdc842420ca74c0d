package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/felixbroker/felix/segment"
)

type logCmd struct {
	Verify logVerifyCmd `cmd:"" help:"Check every record of every segment, read-only; exit 1 on damage."`
	Dump   logDumpCmd   `cmd:"" help:"Print records from an offset."`
}

type logVerifyCmd struct {
	Dir string `arg:"" type:"existingdir" help:"A shard's log directory."`
}

type logDumpCmd struct {
	Dir    string `arg:"" type:"existingdir" help:"A shard's log directory."`
	From   int64  `help:"First offset to print." default:"0"`
	Count  int64  `help:"How many records to print (0: all)." default:"0"`
	Values bool   `help:"Print values, quoted, up to --width bytes." default:"true" negatable:""`
	Width  int    `help:"Bytes of each key and value to print." default:"64"`
}

// segmentFile is one segment found in a log directory.
type segmentFile struct {
	base int64
	path string
}

func listSegments(dir string) ([]segmentFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segmentFile
	for _, e := range entries {
		if base, suf, ok := segment.ParseName(e.Name()); ok && suf == segment.SegmentSuffix {
			out = append(out, segmentFile{base: base, path: filepath.Join(dir, e.Name())})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no segments in %s", dir)
	}
	return out, nil
}

// scanFile scans one segment file read-only; the last segment of a log is
// scanned as active, so a torn tail is reported rather than refused.
func scanFile(sf segmentFile, last bool, visit func(int64, *segment.Record) error) (segment.Summary, error) {
	f, err := os.Open(sf.path)
	if err != nil {
		return segment.Summary{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return segment.Summary{}, err
	}
	return segment.Scan(f, st.Size(), segment.ScanOptions{Name: sf.path, Sealed: !last, Visit: visit})
}

func (c *logVerifyCmd) Run() error {
	segs, err := listSegments(c.Dir)
	if err != nil {
		return err
	}
	var records int64
	next, gapBefore := segs[0].base, false
	for i, sf := range segs {
		sum, err := scanFile(sf, i == len(segs)-1, nil)
		if err != nil {
			return err
		}
		if i > 0 && (sum.Header.Base < next || sum.Header.Base > next && !gapBefore) {
			return fmt.Errorf("%s starts at offset %d but the segment before it ends at %d", sf.path, sum.Header.Base, next)
		}
		// A compacted segment covers every offset up to the next base: the
		// records it dropped from its end are no gap.
		gapBefore = sum.Header.Flags&segment.HeaderFlagCompacted != 0
		status := "ok"
		if sum.Torn {
			status = fmt.Sprintf("torn tail of %d bytes at byte %d (recovery cuts it)", sum.TornBytes, sum.End)
		}
		fmt.Printf("%s  offsets [%d, %d)  %d records  %d bytes  generation %d  %s\n",
			filepath.Base(sf.path), sum.Header.Base, sum.Next, sum.Records, sum.End, sum.LastGeneration, status)
		fmt.Printf("  index: %s\n", checkIndexFile(sf, &sum, i == len(segs)-1))
		records += sum.Records
		next = sum.Next
	}
	fmt.Printf("verified %d segments, %d records, offsets [%d, %d)\n", len(segs), records, segs[0].base, next)
	return nil
}

// checkIndexFile reports whether a sealed segment's index agrees with it.
func checkIndexFile(sf segmentFile, sum *segment.Summary, active bool) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(sf.path), segment.IndexName(sf.base)))
	switch {
	case errors.Is(err, os.ErrNotExist) && active:
		return "none (active segment)"
	case err != nil:
		return "missing: rebuilt on open"
	}
	ix, err := segment.DecodeIndex(b)
	if err != nil {
		return fmt.Sprintf("damaged (%v): rebuilt on open", err)
	}
	if ix.Base != sum.Header.Base || ix.Next != sum.Next || ix.DataEnd < sum.End {
		return "disagrees with its segment: rebuilt on open"
	}
	return fmt.Sprintf("ok, %d entries", len(ix.Entries))
}

func (c *logDumpCmd) Run() error {
	segs, err := listSegments(c.Dir)
	if err != nil {
		return err
	}
	printed := int64(0)
	errDone := errors.New("done")
	for i, sf := range segs {
		if i+1 < len(segs) && segs[i+1].base <= c.From {
			continue
		}
		_, err := scanFile(sf, i == len(segs)-1, func(pos int64, r *segment.Record) error {
			if r.Offset < c.From {
				return nil
			}
			c.print(os.Stdout, pos, r)
			printed++
			if c.Count > 0 && printed >= c.Count {
				return errDone
			}
			return nil
		})
		if errors.Is(err, errDone) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *logDumpCmd) print(w io.Writer, pos int64, r *segment.Record) {
	fmt.Fprintf(w, "offset=%d gen=%d time=%s pos=%d flags=%#x key=%s", r.Offset, r.Generation,
		time.Unix(0, r.Timestamp).UTC().Format(time.RFC3339Nano), pos, r.Flags, clip(r.Key, c.Width))
	if c.Values {
		fmt.Fprintf(w, " value=%s", clip(r.Value, c.Width))
	}
	fmt.Fprintf(w, " size=%d\n", len(r.Value))
}

func clip(b []byte, width int) string {
	if len(b) > width {
		return strconv.Quote(string(b[:width])) + "..."
	}
	return strconv.Quote(string(bytes.Clone(b)))
}
