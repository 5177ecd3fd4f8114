//go:build !unix

package kafkafmt

func cpuSeconds() float64 { return 0 }
