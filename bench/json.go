package bench

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSONFormat names the version of the JSON document. Frozen per version:
// fields may be added, never renamed or removed.
const JSONFormat = "felix-bench/1"

// Document is the JSON output: every result of one run.
//
//	{"format": "felix-bench/1", "results": [Result, ...]}
type Document struct {
	Format  string   `json:"format"`
	Results []Result `json:"results"`
}

// WriteJSON writes results as an indented Document. It refuses results
// that fail Validate.
func WriteJSON(w io.Writer, results []Result) error {
	if err := ValidateAll(results); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Document{Format: JSONFormat, Results: results})
}

// ReadJSON reads a Document written by WriteJSON.
func ReadJSON(r io.Reader) ([]Result, error) {
	var d Document
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidResult, err)
	}
	if d.Format != JSONFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrInvalidResult, d.Format, JSONFormat)
	}
	return d.Results, ValidateAll(d.Results)
}
