package bench

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/felixbroker/felix/bench/internal/units"
)

func writeSampleReport(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "nested", "report")
	if err := WriteReport(dir, sampleResults()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

func TestReportCarriesTheChartsNumbers(t *testing.T) {
	page := writeSampleReport(t)
	work := sampleResults()[1]
	l, b := work.Latency, work.Baselines[0]
	for _, want := range []string{
		"p50 " + units.Duration(l.P50), "p99 " + units.Duration(l.P99), "max " + units.Duration(l.Max), // marks on the curve
		"baseline raw p99.9 " + units.Duration(b.Latency.P999), // the baseline's curve
		"500", "1.00k (result 0.500x)", // records/s bars
		"0.0500", "0.100 (result 0.500x)", // MB/s bars
		"Test CPU", "ext4",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, p := range l.Curve { // the numbers behind the curve
		if row := fmt.Sprintf("%.4f%%</td><td class=\"n\">", 100*p.Quantile); !strings.Contains(page, row) {
			t.Errorf("report lacks the curve point %s", row)
		}
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d charts, want records/s, MB/s and a latency chart per result (2)", n)
	}
}

func TestReportRendersOffline(t *testing.T) {
	page := writeSampleReport(t)
	for _, banned := range []string{"http://", "https://", "<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(strings.ToLower(page), banned) {
			t.Errorf("report contains %q: it would fetch or run something", banned)
		}
	}
	for i, svg := range regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1) {
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chart %d is not well-formed: %v", i, err)
			}
		}
	}
}

func TestReportReplacesAnOlderOne(t *testing.T) {
	dir := t.TempDir()
	results := sampleResults()
	if err := WriteReport(dir, results[:1]); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(dir, results); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != ReportFile {
		t.Errorf("dir holds %v, want only %s", entries, ReportFile)
	}
}
