package store

import (
	"math/rand"
	"strconv"
	"testing"
	"unsafe"
)

// recent never answers what was not put for that key, and keeps the last
// four keys put.
func TestPropertyRecentCache(t *testing.T) {
	var c Recent[string, int]
	testRecentCache(t, c.Get, c.Put)
}

// strCache never answers what was not put for that text (keys spelled
// afresh each time, strconv.Itoa, and keys that are the same string alike),
// finds a key put just before, and keeps four keys of one set.
func TestPropertyStrCache(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var c StrCache[string, int]
	truth := map[string]int{}
	consts := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "C1-1", "C1", "C10"}
	consts[13] = consts[12][:2] // a prefix: the same place, another length
	hits := 0
	for i := 0; i < 20000; i++ {
		k := strconv.Itoa(r.Intn(12))
		if r.Intn(2) == 0 {
			k = consts[r.Intn(len(consts))]
		}
		if v, ok := c.Get(k); ok {
			hits++
			if want, known := truth[k]; !known || v != want {
				t.Fatalf("step %d: get(%q) = %d, want %d (known %v)", i, k, v, want, known)
			}
			continue
		}
		if _, known := truth[k]; !known {
			truth[k] = r.Intn(1000)
		}
		c.Put(k, truth[k])
		if v, ok := c.Get(k); !ok || v != truth[k] {
			t.Fatalf("step %d: get(%q) right after put = %d, %v", i, k, v, ok)
		}
	}
	if hits < 5000 {
		t.Errorf("%d hits in 20,000 gets of 15 constants and fresh spellings, want most of the constants' found", hits)
	}
	// four keys of one set are all kept, whichever is used; a fifth
	// replaces the one put first
	var d StrCache[string, int]
	var set []string
	for i := 0; len(set) < strCacheWays+1; i++ {
		if k := strconv.Itoa(i); strCacheSet(unsafe.StringData(k), len(k)) == 0 {
			set = append(set, k)
		}
	}
	for i, k := range set[:strCacheWays] {
		d.Put(k, i)
	}
	for i, k := range set[:strCacheWays] {
		if v, ok := d.Get(k); !ok || v != i {
			t.Errorf("%q, one of %d keys of a set, is missing: %d %v", k, strCacheWays, v, ok)
		}
	}
	d.Put(set[strCacheWays], strCacheWays)
	if _, ok := d.Get(set[0]); ok {
		t.Errorf("%q, put first, was kept past a fifth key of its set", set[0])
	}
	for i, k := range set[1:] {
		if v, ok := d.Get(k); !ok || v != i+1 {
			t.Errorf("%q is missing after the fifth key: %d %v", k, v, ok)
		}
	}
	if _, ok := d.Get(""); ok {
		t.Error("the empty key was found")
	}
}

func testRecentCache(t *testing.T, get func(string) (int, bool), put func(string, int)) {
	r := rand.New(rand.NewSource(1))
	truth := map[string]int{}
	var order []string
	consts := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}
	for i := 0; i < 5000; i++ {
		k := strconv.Itoa(r.Intn(12))
		if r.Intn(2) == 0 {
			k = consts[r.Intn(12)]
		}
		if v, ok := get(k); ok {
			if v != truth[k] {
				t.Fatalf("step %d: get(%q) = %d, want %d", i, k, v, truth[k])
			}
			continue
		}
		truth[k] = r.Intn(1000) // a new answer: the old one was dropped
		put(k, truth[k])
		order = append(order, k)
		for j := max(0, len(order)-4); j < len(order); j++ {
			if _, ok := get(order[j]); !ok {
				t.Fatalf("step %d: %q, put %d puts ago, forgotten", i, order[j], len(order)-1-j)
			}
		}
	}
}
