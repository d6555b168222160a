//go:build race

package vk

// raceEnabled is whether this test binary was built with -race.
const raceEnabled = true
