//go:build race

package replica

// folRace: the race detector allocates on its own account.
const folRace = true
