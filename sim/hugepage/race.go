//go:build race

package hugepage

// raceEnabled: under the race detector, which sees only Go's memory, arenas
// hand out Go memory, so that it checks what runs share.
const raceEnabled = true
