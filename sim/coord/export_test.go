package coord

import "unsafe"

// OffsetRunSizeForTest is the bytes an offsetRun takes (tests only).
const OffsetRunSizeForTest = unsafe.Sizeof(offsetRun{})

// SizesForTest is how many runs and heads the log keeps (tests only).
func (l *OffsetsLog) SizesForTest() (runs, heads int) { return l.runs.Len(), l.heads.Len() }

// KeptForTest is how many runs, heads, codes and odd records the log
// still keeps (ForgetBefore), and how many members' lists (tests only).
func (l *OffsetsLog) KeptForTest() (runs, heads, parts, odd, lists int) {
	for _, c := range l.lists {
		if c.at >= 0 {
			lists++
		}
	}
	return l.runs.Len() - l.runs.First(), l.heads.Len() - l.heads.First(), l.parts.Len() - l.parts.First(), l.odd.Len() - l.odd.First(), lists
}
