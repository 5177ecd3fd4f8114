//go:build race

package explore_test

// raceDetector: the test binary runs under -race, whose sync.Pool drops a
// quarter of what is put back (sync.Pool.Put), so encoding/json's pooled
// encode states are made again and allocation counts say nothing about
// the code under test.
const raceDetector = true
