package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// A member's processing time per record is a fraction, not a duration
// rounded to ticks: N time units for K records (K 0 or 1: one record).
// On the page's scale it is processing.ticks, N ticks for K records (1:
// one record a tick; 1/10: ten a tick); in real time it is processing.ms,
// milliseconds a record, possibly a fraction of a tick (0.1 ms: ten
// records a millisecond, fifty in a 5 ms tick), or N ms for K records.
// Config holds it in the world's unit, as typed (reduced); Engine gives the
// engine N ticks for K records (ProcessingMSToTicks), exactly.

// processingKey is the setting's one name (processing.ms its real-time name).
const processingKey = "processing.ticks"

// maxProcessingTerm bounds N and K on the page's scale, and K in real time.
const maxProcessingTerm = 1_000_000

// maxProcessingUS bounds a processing.ms given as a number, in microseconds.
const maxProcessingUS = int64(MaxDurationMS) * 1000

func processingSetting() Setting {
	return Setting{Key: processingKey, Allowed: "N | N/K, whole numbers from 1 to 1000000", Client: true,
		Doc:       "processing time per record: N ticks a record, or N ticks for K records (1/50: 50 records a tick)",
		allowedMS: "milliseconds, from 0.001 (3 decimals at most), or N/K",
		docMS:     "processing time per record, exact (not rounded to ticks): 0.1 is 10 records a millisecond; N/K is N ms for K records",
		get: func(w *Config, c *ClientConfig) string {
			return formatProcessing(c.ProcessTicks, c.ProcessRecords, w.Time)
		},
		set: func(w *Config, c *ClientConfig, v string) error {
			n, k, err := w.parseProcessing(v)
			if err != nil {
				return err
			}
			c.ProcessTicks, c.ProcessRecords = n, k
			return nil
		}}
}

// parseProcessing reads a processing time in the world's unit.
func (w *Config) parseProcessing(v string) (n, k int, err error) {
	if w.Time == TimeMS {
		n, k, err = ParseProcessingMS(v)
		if err != nil {
			return 0, 0, fmt.Errorf("processing.ms: %v", err)
		}
		return n, k, nil
	}
	n, k, err = ParseProcessingCost(v)
	if err != nil {
		return 0, 0, fmt.Errorf("processing.ticks: %v", err)
	}
	return n, k, nil
}

// formatProcessing spells N units for K records as the unit's setting takes it.
func formatProcessing(n, k int, unit TimeUnit) string {
	if unit == TimeMS {
		return ProcessingMS(n, k)
	}
	return ProcessingCost(n, k)
}

// convertProcessing gives N units for K records of the world's unit in
// the unit to, exactly: N ticks are N x tick.ms milliseconds, and N
// milliseconds for K records are N ticks for K x tick.ms records. Refused
// when the page's scale cannot hold the result (N or K past 1,000,000).
func (w *Config) convertProcessing(n, k int, to TimeUnit) (int, int, error) {
	if to == w.Time {
		return n, k, nil
	}
	if to == TimeMS {
		t, r := reduceProcessing(int64(n)*int64(w.TickMS), int64(max(k, 1)))
		return t, r, nil
	}
	t, r := ProcessingMSToTicks(n, k, w.TickMS)
	if t > maxProcessingTerm || r > maxProcessingTerm {
		return 0, 0, fmt.Errorf("%s ms is %d ticks for %d records with tick.ms %d, past %d", ProcessingMS(n, k), t, r, w.TickMS, maxProcessingTerm)
	}
	return t, r, nil
}

// reduceProcessing is n units for k records as the lowest terms, with one
// record spelled 0.
func reduceProcessing(n, k int64) (int, int) {
	g := gcd(n, k)
	n, k = n/g, k/g
	if k == 1 {
		k = 0
	}
	return int(n), int(k)
}

// ParseProcessingCost reads processing.ticks: "N" (N ticks a record) or
// "N/K" (N ticks for K records), reduced; 0 records stands for one.
func ParseProcessingCost(v string) (ticks, records int, err error) {
	num, den, frac := strings.Cut(v, "/")
	t, errT := strconv.Atoi(num)
	k := 1
	var errK error
	if frac {
		k, errK = strconv.Atoi(den)
	}
	if errT != nil || errK != nil || t < 1 || t > maxProcessingTerm || k < 1 || k > maxProcessingTerm {
		return 0, 0, fmt.Errorf("%q is not N or N/K with N and K whole numbers from 1 to 1000000 (N ticks for K records)", v)
	}
	ticks, records = reduceProcessing(int64(t), int64(k))
	return ticks, records, nil
}

// ProcessingCost spells a processing time as processing.ticks takes it.
func ProcessingCost(ticks, records int) string {
	if records <= 1 {
		return strconv.Itoa(ticks)
	}
	return strconv.Itoa(ticks) + "/" + strconv.Itoa(records)
}

// ParseProcessingMS reads processing.ms: milliseconds a record, to the
// microsecond ("5", "0.1", "2.345"), or "N/K" (N ms for K records, for a
// time no decimal spells: 5/3), as N ms for K records, reduced.
func ParseProcessingMS(v string) (ms, records int, err error) {
	bad := fmt.Errorf("%q is not a time in milliseconds from 0.001 to %d with at most 3 decimals (0.1 is 100 microseconds a record), or N/K (N ms for K records, N from 1 to %d, K from 1 to %d)",
		v, MaxDurationMS, MaxDurationMS, maxProcessingTerm)
	if num, den, frac := strings.Cut(v, "/"); frac {
		n, errN := strconv.Atoi(num)
		k, errK := strconv.Atoi(den)
		if !digits(num) || !digits(den) || errN != nil || errK != nil || n < 1 || n > MaxDurationMS || k < 1 || k > maxProcessingTerm {
			return 0, 0, bad
		}
		ms, records = reduceProcessing(int64(n), int64(k))
		return ms, records, nil
	}
	whole, dec, _ := strings.Cut(v, ".")
	if !digits(whole) || len(dec) > 3 || (strings.Contains(v, ".") && !digits(dec)) || len(whole) > 10 {
		return 0, 0, bad
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((dec + "000")[:3], 10, 64)
	us := w*1000 + f
	if us < 1 || us > maxProcessingUS {
		return 0, 0, bad
	}
	ms, records = reduceProcessing(us, 1000)
	return ms, records, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ProcessingMS spells N ms for K records as processing.ms takes it: a
// decimal when one to the microsecond is exact (0.1, 5, 2.345), else N/K.
func ProcessingMS(ms, records int) string {
	k := int64(max(records, 1))
	us := int64(ms) * 1000
	if us%k != 0 {
		return strconv.Itoa(ms) + "/" + strconv.FormatInt(k, 10)
	}
	us /= k
	s := strconv.FormatInt(us/1000, 10)
	if f := us % 1000; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%03d", f), "0")
	}
	return s
}

// ProcessingMSToTicks is the one place a real-time processing time
// becomes the engine's: N ms for K records (0: one), with a tick of tickMS
// milliseconds, is N ticks for K x tickMS records, reduced, exactly (0.1
// ms a record, 1 ms for 10, is 1 tick for 50 records with tick.ms 5).
func ProcessingMSToTicks(ms, records, tickMS int) (ticks, recs int) {
	return reduceProcessing(int64(ms), int64(max(records, 1))*int64(tickMS))
}
