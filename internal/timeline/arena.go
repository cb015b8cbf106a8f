package timeline

import "strings"

// A page keeps a few small things for every lane for as long as the run
// lasts: its struct, its names, its encoded head. Allocated one by one,
// they are objects the collector marks on every cycle, thousands of them;
// here they are carved from chunks that are only appended to (nothing
// handed out is ever written again), a few objects in all.

const (
	// laneChunk is how many lanes a chunk of lanes holds.
	laneChunk = 64
	// textChunk is the size of a chunk of names; what is larger than a
	// quarter of it gets an allocation of its own.
	textChunk = 16 << 10
)

// laneArena hands out lanes from chunks (Timeline.newLane).
type laneArena struct{ chunk []lane }

// alloc returns a new zero lane.
func (a *laneArena) alloc() *lane {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]lane, 0, laneChunk)
	}
	a.chunk = append(a.chunk, lane{})
	return &a.chunk[len(a.chunk)-1]
}

// textArena hands out strings from chunks. The zero textArena is ready;
// a nil one gives each its own allocation.
type textArena struct {
	// text is the current chunk: a strings.Builder never writes again a
	// byte it has made part of a String.
	text strings.Builder
}

// join returns parts joined, and where each ends in the result.
func (a *textArena) join(parts []string, ends []uint32) string {
	n := 0
	for _, s := range parts {
		n += len(s)
	}
	b := &strings.Builder{}
	if a != nil && n <= textChunk/4 {
		if a.text.Cap()-a.text.Len() < n {
			a.text = strings.Builder{}
			a.text.Grow(textChunk)
		}
		b = &a.text
	} else {
		b.Grow(n)
	}
	start := b.Len()
	for i, s := range parts {
		b.WriteString(s)
		ends[i] = uint32(b.Len() - start)
	}
	return b.String()[start:]
}

// logChunk is the size of a chunk of a chunkLog.
const logChunk = 64 << 10

// chunkLog holds bytes appended one after another, in chunks that are
// only appended to, so that what it handed out, and a snapshot of its
// chunks, stay as they were; a text larger than logChunk gets a chunk of
// its own size. A Timeline keeps three: every lane's encoded marks
// (appendMark, a lane's marks are spans of it), the lanes' encoded heads,
// and the bases (the versions chains of patches start from, written one
// chunk after the other into the page's bases element).
type chunkLog struct {
	chunks [][]byte
	// size is how many bytes were appended.
	size int
	// scratch holds a text while it is encoded (add).
	scratch []byte
}

// logSpan is where a text lies in a chunkLog: bytes start to end of
// chunk (of the mark log: a lane's marks, each after the first led by
// its comma).
type logSpan struct{ chunk, start, end uint32 }

// bytes is what s spans.
func (g *chunkLog) bytes(s logSpan) []byte { return g.chunks[s.chunk][s.start:s.end] }

// add appends to the log what encode appends to its argument, and
// returns where it lies.
func (g *chunkLog) add(encode func([]byte) []byte) logSpan {
	g.scratch = encode(g.scratch[:0])
	n := len(g.chunks)
	if n == 0 || cap(g.chunks[n-1])-len(g.chunks[n-1]) < len(g.scratch) {
		g.chunks = append(g.chunks, make([]byte, 0, max(logChunk, len(g.scratch))))
		n++
	}
	c := g.chunks[n-1]
	start := len(c)
	g.chunks[n-1] = append(c, g.scratch...)
	g.size += len(g.scratch)
	return logSpan{chunk: uint32(n - 1), start: uint32(start), end: uint32(start + len(g.scratch))}
}
