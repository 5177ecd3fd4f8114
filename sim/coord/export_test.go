package coord

import "unsafe"

// OffsetRunSizeForTest is the bytes an offsetRun takes (tests only).
const OffsetRunSizeForTest = unsafe.Sizeof(offsetRun{})

// SizesForTest is how many runs and heads the log keeps (tests only).
func (l *OffsetsLog) SizesForTest() (runs, heads int) { return l.runs.Len(), l.heads.Len() }
