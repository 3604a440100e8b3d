//go:build race

package check

// raceEnabled: the race detector makes reading hundreds of MiB ten times
// slower; the hostile-file bounds are checked in the normal run.
const raceEnabled = true
