//go:build !race

package conformance_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = false
