// Package chart draws the benchmark report's charts as SVG text, by hand:
// a percentile curve of latency (HdrHistogram's classic plot, x scaled as
// 1/(1-q) on a log axis so the tail gets the room) and grouped throughput
// bars (a result beside its baselines).
//
// The SVG is meant to sit inline in an HTML page, so it carries no xmlns
// and must never refer to anything outside itself: no fonts, images, style
// sheets or scripts fetched from anywhere. Every figure a chart draws is
// also written in it as text (a label or a <title> tooltip), so a reader,
// or a test, can read the numbers without measuring pixels.
//
// The package is pure: values in, text out, no IO, no clock.
package chart
