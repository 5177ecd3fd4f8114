package sim

import (
	"testing"

	"github.com/kgrepl/kgrepl/sim/internal/store"
)

// setSeqChunk makes Seq chunks n items long (a power of two) until the
// test ends, so that small worlds take every path of a chunked history.
func setSeqChunk(t testing.TB, n int) {
	if n <= 0 || n&(n-1) != 0 {
		t.Fatalf("setSeqChunk(%d): a chunk is a power of two items long", n)
	}
	t.Cleanup(store.SetSeqChunkForTest(n))
}

// tinyChunks makes Seq chunks 2 items long for one test, so that every
// path (full chunks shared, copy-on-write of a full chunk, the spine's
// capacity) is taken many times even in small worlds.
func tinyChunks(t *testing.T) { setSeqChunk(t, 2) }
