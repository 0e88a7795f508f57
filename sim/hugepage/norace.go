//go:build !race

package hugepage

// raceEnabled is whether the race detector is on (see race.go).
const raceEnabled = false
