//go:build !race

package explore_test

// raceDetector: see race_on_test.go.
const raceDetector = false
