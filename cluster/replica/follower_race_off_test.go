//go:build !race

package replica

const folRace = false
