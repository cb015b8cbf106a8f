package timeline

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/diff"
	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
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
		}
		var all []given
		for i := 0; i < 3000; i++ {
			g := given{parts: [3]string{fmt.Sprint("ctx-", i), strings.Repeat("n", i%97), strings.Repeat("u", (i*7919)%(textChunk/2))}}
			g.s = a.join(g.parts[:], g.ends[:])
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

// TestMarkLog: the marks of lanes observed in turn, some of them larger
// than a chunk of the log, read back in the page as each lane's own, in
// order, with the lane written in between (a refresh) too, and its head
// as the first write encoded it.
func TestMarkLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.html")
	tl := New(path, "", nil)
	big := make([]diff.Operation, 400)
	for i := range big {
		big[i] = diff.Operation{Op: diff.OpReplace, Path: fmt.Sprint("/data/k", i), Old: strings.Repeat("o", 300), Value: strings.Repeat("n", 300)}
	}
	const lanes, each = 7, 300
	for i := 0; i < each; i++ {
		for l := 0; l < lanes; l++ {
			if l == 3 && i%2 == 1 {
				continue // this lane's marks come in runs of its own at times
			}
			rec := recordOf("Updated", "ConfigMap", fmt.Sprint("cm-", l), fmt.Sprint("uid-", l), time.Duration(i)*time.Second)
			if (i*lanes+l)%97 == 0 {
				rec.Changes = big
			}
			tl.Observe(rec, nil, stage.Changes{})
			if l == 5 {
				again := recordOf("Updated", "ConfigMap", "cm-5", "uid-5", time.Duration(i)*time.Second+time.Millisecond)
				tl.Observe(again, nil, stage.Changes{})
			}
		}
		if i == each/2 {
			if err := tl.Write(true); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tl.Write(false); err != nil {
		t.Fatal(err)
	}
	if len(tl.log.chunks) < 2 {
		t.Fatalf("the log has %d chunks: the test must cross chunks", len(tl.log.chunks))
	}
	doc, _ := readDocument(t, path)
	if len(doc.Lanes) != lanes {
		t.Fatalf("%d lanes, want %d", len(doc.Lanes), lanes)
	}
	for l, rl := range doc.Lanes {
		// Its head, encoded at the first write, kept for the second.
		if rl.Name != fmt.Sprint("cm-", l) || rl.UID != fmt.Sprint("uid-", l) || rl.Kind != "ConfigMap" {
			t.Fatalf("lane %d reads %s %s %s", l, rl.Kind, rl.Name, rl.UID)
		}
		var want []int64
		for i := 0; i < each; i++ {
			if l == 3 && i%2 == 1 {
				continue
			}
			at := t0.Add(time.Duration(i) * time.Second).UnixMilli()
			want = append(want, at)
			if l == 5 {
				want = append(want, at+1)
			}
		}
		if len(rl.Marks) != len(want) {
			t.Fatalf("lane %d has %d marks, want %d", l, len(rl.Marks), len(want))
		}
		for k, m := range rl.Marks {
			if m.Time != want[k] || m.Type != "Updated" {
				t.Fatalf("lane %d, mark %d: %d %s, want %d Updated", l, k, m.Time, m.Type, want[k])
			}
			if len(m.Changes) == 400 && !strings.Contains(m.Changes[399][1], "data.k399") {
				t.Fatalf("lane %d, mark %d: a large mark lost its changes", l, k)
			}
		}
	}
}
