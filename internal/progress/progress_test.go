package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the Line's goroutine and the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLineDrawsAndClears(t *testing.T) {
	var out lockedBuffer
	l := Start(&out, 0, func() string { return "listing 1 type: 5 objects" })
	l.Stop()
	l.Stop() // once
	got := out.String()
	if !strings.HasPrefix(got, "\r\x1b[Klisting 1 type: 5 objects") || !strings.HasSuffix(got, "\r\x1b[K") || strings.Count(got, "\r\x1b[K") < 2 {
		t.Errorf("drawn %q, want the line drawn over the line, then cleared", got)
	}
}

func TestLineNotYetDue(t *testing.T) {
	var out lockedBuffer
	l := Start(&out, time.Hour, func() string { return "never" })
	l.Stop()
	if got := out.String(); got != "" {
		t.Errorf("a line stopped before its delay wrote %q, want nothing", got)
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a long line of text", 10, "a long li…"},
		{"two\nlines", 20, "two lines"},
		{"été à Zürich", 5, "été …"},
	} {
		if got := Fit(tc.in, tc.n); got != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestWantedOnlyOnATerminal(t *testing.T) {
	f := NewFlags()
	var buf bytes.Buffer
	if f.Wanted(&buf, &buf, false, false) {
		t.Error("a line wanted on a buffer, which is no terminal")
	}
	if f.ForStream(&buf, &buf, false, true, nil, "", nil) != nil {
		t.Error("ForStream started a line on a buffer")
	}
}
