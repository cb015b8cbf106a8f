package timeline

// A change's versions as the page gets them: the text of the version
// before (once per chain, "pb") and, for each change, the hunks that make
// the version after from it ("p"). The page diffs the two versions when
// a mark is looked at; the run only compares bytes.

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
)

const (
	// maxPatchBytes bounds a patch's encoding: a change that rewrites
	// more (a member grown by a long value, keys reordered) goes the
	// walk's way ("x"), whose size is the members that differ.
	maxPatchBytes = 512
	// maxBaseBytes bounds the version before a chain of patches starts
	// with ("pb"): a small object's text costs the page little more than
	// the members that differ; a larger one's (a Pod's kilobytes) would
	// outweigh its changes, which go the walk's way.
	maxBaseBytes = 1024
	// hunkGap is the fewest equal bytes that part two hunks: nearer
	// differences are one hunk, which costs less than two encoded.
	hunkGap = 12
	// hunkCost is about what a hunk's encoding adds to its bytes.
	hunkCost = 16
	// desyncRun is the longest run of differing bytes taken for a value
	// rewritten in place when the lengths differ: a longer one is where
	// the texts slid apart.
	desyncRun = 32
)

// hunk replaces del bytes of a version at offset at with ins.
type hunk struct {
	at, del int
	ins     []byte
}

// diffBytes returns the hunks that make b from a, appended to hunks, in
// order of offset and apart, and whether their bytes stay within
// maxPatchBytes. A common prefix and suffix are kept. Between them, the
// texts are compared at the same offsets, each run of differing bytes a
// hunk: an update rewrites most values in place (a resourceVersion, a
// time, a counter), keeping the length. Where the lengths differ, that
// goes on from the front and from the back until the texts look slid
// apart (a run of more than desyncRun differing bytes), and what lies
// between is one hunk.
func diffBytes(hunks []hunk, a, b []byte) ([]hunk, bool) {
	p := commonPrefix(a, b)
	s := commonSuffix(a[p:], b[p:])
	midA, midB := a[p:len(a)-s], b[p:len(b)-s]
	la, lb := len(midA), len(midB)
	n := min(la, lb)
	budget := maxPatchBytes
	add := func(at, del int, ins []byte) bool {
		hunks = append(hunks, hunk{at: p + at, del: del, ins: ins})
		budget -= len(ins) + hunkCost
		return budget >= 0
	}
	// From the front, at the same offsets.
	f := 0
	for f < n {
		j := f + commonPrefix(midA[f:n], midB[f:n])
		if j >= n {
			f = n
			break
		}
		// end is one past the hunk's last differing byte: it ends
		// where hunkGap bytes alike follow, or the texts do.
		end := j + 1
		for end < n && (la == lb || end-j <= desyncRun) {
			r := equalRun(midA[end:n], midB[end:n])
			if r >= hunkGap || end+r >= n {
				break
			}
			end += r + 1
		}
		if la != lb && end-j > desyncRun {
			f = j
			break
		}
		if !add(j, end-j, midB[j:end]) {
			return hunks, false
		}
		f = end
	}
	if la == lb {
		return hunks, true
	}
	// From the back, at the same offsets from the ends, down to f: t
	// bytes from the ends are done.
	m, t := n-f, 0
	back := len(hunks)
	for t < m {
		u := t + commonSuffix(midA[f:la-t], midB[f:lb-t])
		if u >= m {
			t = m
			break
		}
		end := u + 1
		for end < m && end-u <= desyncRun {
			r := equalRunBack(midA[la-m:la-end], midB[lb-m:lb-end])
			if r >= hunkGap || end+r >= m {
				break
			}
			end += r + 1
		}
		if end-u > desyncRun {
			t = u
			break
		}
		if !add(la-end, end-u, midB[lb-end:lb-u]) {
			return hunks, false
		}
		t = end
	}
	// Between: one hunk, before the back's (found last first).
	if !add(f, la-t-f, midB[f:lb-t]) {
		return hunks, false
	}
	slices.Reverse(hunks[back:])
	return hunks, true
}

// equalRun is how many bytes a and b begin with alike: exact below
// hunkGap, at least hunkGap otherwise (diffBytes needs to know no more).
// It is commonPrefix of their first 16 bytes, written out: as that call
// the 50,000-delta replay runs 20 M more instructions (0.7%).
func equalRun(a, b []byte) int {
	if len(a) >= 16 && len(b) >= 16 {
		if x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b); x != 0 {
			return bits.TrailingZeros64(x) >> 3
		}
		return 8 + bits.TrailingZeros64(binary.LittleEndian.Uint64(a[8:])^binary.LittleEndian.Uint64(b[8:]))>>3
	}
	i := 0
	for i < hunkGap && i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// equalRunBack is equalRun from the ends of a and b.
func equalRunBack(a, b []byte) int {
	if len(a) >= 16 && len(b) >= 16 {
		if x := binary.BigEndian.Uint64(a[len(a)-8:]) ^ binary.BigEndian.Uint64(b[len(b)-8:]); x != 0 {
			return bits.TrailingZeros64(x) >> 3
		}
		return 8 + bits.TrailingZeros64(binary.BigEndian.Uint64(a[len(a)-16:])^binary.BigEndian.Uint64(b[len(b)-16:]))>>3
	}
	i := 0
	for i < hunkGap && i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// commonPrefix is the length of the longest common prefix of a and b.
// It compares 16 bytes a step, the slices advanced rather than indexed,
// so that the loop has no bounds checks: a chain's patches compare most
// of each version's bytes here.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	for len(a) >= 16 && len(b) >= 16 {
		x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b)
		y := binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])
		if x|y != 0 {
			if x != 0 {
				return n - len(a) + bits.TrailingZeros64(x)>>3
			}
			return n - len(a) + 8 + bits.TrailingZeros64(y)>>3
		}
		a, b = a[16:], b[16:]
	}
	if len(a) >= 8 && len(b) >= 8 {
		if x := binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b); x != 0 {
			return n - len(a) + bits.TrailingZeros64(x)>>3
		}
		a, b = a[8:], b[8:]
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return n - len(a) + i
}

// commonSuffix is the length of the longest common suffix of a and b, as
// commonPrefix compares from the end.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	for len(a) >= 16 && len(b) >= 16 {
		x := binary.BigEndian.Uint64(a[len(a)-8:]) ^ binary.BigEndian.Uint64(b[len(b)-8:])
		y := binary.BigEndian.Uint64(a[len(a)-16:]) ^ binary.BigEndian.Uint64(b[len(b)-16:])
		if x|y != 0 {
			if x != 0 {
				return n - len(a) + bits.TrailingZeros64(x)>>3
			}
			return n - len(a) + 8 + bits.TrailingZeros64(y)>>3
		}
		a, b = a[:len(a)-16], b[:len(b)-16]
	}
	if len(a) >= 8 && len(b) >= 8 {
		if x := binary.BigEndian.Uint64(a[len(a)-8:]) ^ binary.BigEndian.Uint64(b[len(b)-8:]); x != 0 {
			return n - len(a) + bits.TrailingZeros64(x)>>3
		}
		a, b = a[:len(a)-8], b[:len(b)-8]
	}
	i := 0
	for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return n - len(a) + i
}

// isASCII: b has no byte above 0x7f. The page indexes a version's text in
// UTF-16 units, which are its bytes only then.
func isASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isScriptText: b is printable ASCII without '<', and so lies as it is,
// byte for byte, in the text of a script element of a page (no '<' to
// begin "</script" or "<!--", no control character the HTML parser
// rewrites, such as a carriage return), where the page's script reads it
// back in UTF-16 units that are its bytes.
func isScriptText(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// A byte is ≥ 0x80, < 0x20, 0x7f or '<' iff its high bit is set in
	// one of these, once no byte has its own high bit set (no borrow then
	// crosses bytes but from one of those). Any high bit sends the text
	// to the exact check: most texts have none, and are read once, a
	// word at a time, without a branch a word.
	var acc uint64
	rest := b
	for len(rest) >= 8 {
		x := binary.LittleEndian.Uint64(rest)
		acc |= x | (x - 0x20*ones) | ((x ^ 0x7f*ones) - ones) | ((x ^ '<'*ones) - ones)
		rest = rest[8:]
	}
	if acc&highs != 0 {
		return scriptTextBytes(b)
	}
	return scriptTextBytes(rest)
}

// scriptTextBytes is isScriptText a byte at a time.
func scriptTextBytes(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '<' {
			return false
		}
	}
	return true
}

// appendHunks appends hunks as the page reads "p": [[at, del, "ins"], …].
func appendHunks(b []byte, hunks []hunk) []byte {
	b = append(b, '[')
	for i, h := range hunks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(h.at), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(h.del), 10)
		b = append(b, ',')
		b = appendRawText(b, h.ins)
		b = append(b, ']')
	}
	return append(b, ']')
}
