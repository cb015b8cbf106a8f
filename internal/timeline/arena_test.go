package timeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestTextArena: what the arena hands out reads as given however much is
// added after it, the ends say where each part ends, and parts too large
// for a chunk, or without an arena, are copies of their own.
func TestTextArena(t *testing.T) {
	for _, a := range []*textArena{{}, nil} {
		type given struct {
			s     string
			ends  [3]uint32
			parts [3]string
			b     []byte
			want  []byte
		}
		var all []given
		for i := 0; i < 3000; i++ {
			g := given{parts: [3]string{fmt.Sprint("ctx-", i), strings.Repeat("n", i%97), strings.Repeat("u", (i*7919)%(textChunk/2))}}
			g.s = a.join(g.parts[:], g.ends[:])
			g.want = []byte(fmt.Sprint("head-", i, strings.Repeat("h", (i*31)%(textChunk/3))))
			g.b = a.clone(g.want)
			all = append(all, g)
		}
		for i, g := range all {
			if g.s != strings.Join(g.parts[:], "") {
				t.Fatalf("join %d reads %q, want %q", i, g.s, strings.Join(g.parts[:], ""))
			}
			start := uint32(0)
			for k, p := range g.parts {
				if g.s[start:g.ends[k]] != p {
					t.Fatalf("join %d: part %d reads %q, want %q", i, k, g.s[start:g.ends[k]], p)
				}
				start = g.ends[k]
			}
			if !bytes.Equal(g.b, g.want) || cap(g.b) != len(g.b) {
				t.Fatalf("clone %d reads %q (capacity %d), want %q", i, g.b, cap(g.b), g.want)
			}
		}
	}
}

// TestLaneArena: every lane is new and zero, and stays where it was.
func TestLaneArena(t *testing.T) {
	var a laneArena
	var lanes []*lane
	for i := 0; i < 5*laneChunk+3; i++ {
		l := a.alloc()
		if l.Parent != 0 || l.names != "" || l.marks != nil {
			t.Fatalf("lane %d is not zero: %+v", i, l)
		}
		l.Parent = i
		lanes = append(lanes, l)
	}
	for i, l := range lanes {
		if l.Parent != i {
			t.Fatalf("lane %d now says %d: lanes moved or were handed out twice", i, l.Parent)
		}
	}
}
