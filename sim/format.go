package sim

import (
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

// PartList is partList for the views.
func (w *World) PartList(tps []TopicPartition) string { return w.layout.PartList(tps) }
