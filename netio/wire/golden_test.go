package wire

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden vectors in testdata/wire")

const goldenDir = "../../testdata/wire"

// formatHex renders a frame as an annotated hex vector: a comment block,
// the header split into its fields, the body 16 bytes a line.
func formatHex(c goldenCase) string {
	var b strings.Builder
	f, _, _ := (&Reader{}).Next(c.frame)
	fmt.Fprintf(&b, "# %s (0x%04x)  flags 0x%04x  request %d  %d bytes\n", f.Type, uint16(f.Type), uint16(f.Flags), f.RequestID, len(c.frame))
	if c.note != "" {
		fmt.Fprintf(&b, "# %s\n", c.note)
	}
	b.WriteString("# length   type flags request id\n")
	h := hex.EncodeToString(c.frame[:HeaderSize])
	fmt.Fprintf(&b, "%s %s %s %s\n", h[0:8], h[8:12], h[12:16], h[16:32])
	if len(f.Body) == 0 {
		return b.String()
	}
	if f.Type.JSON() {
		fmt.Fprintf(&b, "# body, JSON: %s\n", f.Body)
	} else {
		b.WriteString("# body\n")
	}
	for rest := f.Body; len(rest) > 0; {
		n := min(16, len(rest))
		for i, x := range rest[:n] {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%02x", x)
		}
		b.WriteByte('\n')
		rest = rest[n:]
	}
	return b.String()
}

// parseHex reads a vector back: everything after '#' is a comment, white
// space is ignored, the rest is hex.
func parseHex(text string) ([]byte, error) {
	var digits strings.Builder
	for line := range strings.Lines(text) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(digits.String())
}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(goldenDir, name+".hex"))
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./netio/wire -update)", err)
	}
	b, err := parseHex(string(text))
	if err != nil {
		t.Fatalf("%s.hex: %v", name, err)
	}
	return b
}

func TestGoldenVectors(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			if *update {
				if err := os.WriteFile(filepath.Join(goldenDir, c.name+".hex"), []byte(formatHex(c)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := readGolden(t, c.name)
			if !bytes.Equal(c.frame, got) {
				t.Fatalf("encoding changed:\nencoder %x\nvector  %x", c.frame, got)
			}
			f, need, err := (&Reader{}).Next(got)
			if err != nil || need != 0 || f.Size() != len(got) {
				t.Fatalf("Next: need %d, size %d of %d, err %v", need, f.Size(), len(got), err)
			}
			model, err := decodeModel(f, Limits{})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(model, c.want) {
				t.Fatalf("decoded\n%#v\nwant\n%#v", model, c.want)
			}
		})
	}
}

func TestGoldenVectorsCoverEveryFrameType(t *testing.T) {
	seen := map[Type]bool{}
	for _, c := range goldenCases() {
		f, _, err := (&Reader{}).Next(c.frame)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		seen[f.Type] = true
	}
	for _, typ := range Types() {
		if !seen[typ] {
			t.Errorf("no golden vector for %v", typ)
		}
	}
}

func TestGoldenDirectoryHoldsNoStaleVectors(t *testing.T) {
	var names []string
	for _, c := range goldenCases() {
		names = append(names, c.name+".hex")
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.hex"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.Contains(names, filepath.Base(f)) {
			t.Errorf("%s has no golden case: delete it or add the case", f)
		}
	}
}

func TestParseHexIgnoresCommentsAndSpace(t *testing.T) {
	got, err := parseHex("# c\n0a0b 0c # tail\n\n 0d\n")
	if err != nil || !bytes.Equal(got, []byte{0x0a, 0x0b, 0x0c, 0x0d}) {
		t.Fatalf("got %x, %v", got, err)
	}
}
