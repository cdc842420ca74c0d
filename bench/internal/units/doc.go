// Package units formats the figures of a benchmark for people: durations
// with three significant digits and a unit that fits ("1.23ms"), counts with
// an SI suffix ("123k"), byte rates in MB/s (10^6 bytes) and ratios ("0.85x").
//
// It must never round a figure so far that two different figures print the
// same in one table: three significant digits everywhere, the precision the
// latency histograms keep. Machines read JSON or CSV, never this text.
package units
