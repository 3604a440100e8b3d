//go:build race

package extsort

// raceEnabled: the race detector allocates on its own account, so the
// garbage a spill makes is not measured under it.
const raceEnabled = true
