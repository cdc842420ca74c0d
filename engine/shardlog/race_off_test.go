//go:build !race

package shardlog

const raceEnabled = false
