package recording

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// lines are records of a few sizes, one longer than the reader's buffer.
func testLines() []string {
	var out []string
	for i := range 40 {
		out = append(out, fmt.Sprintf(`{"type":"Updated","name":"cm-%03d","object":{"data":{"k":"%s"}}}`, i, strings.Repeat("v", i*7)))
	}
	out = append(out, `{"type":"Added","name":"big","object":{"data":{"k":"`+strings.Repeat("x", 3*writeBuffer)+`"}}}`)
	return out
}

// record writes lines to a new recording named name, cut after every per
// lines, and returns its path.
func record(t *testing.T, name string, lines []string, per int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWriter(f, CompressionOf(name))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if _, err := w.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
		if (i+1)%per == 0 {
			if err := w.Cut(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll reads a recording from its bytes: the lines, and what ended it.
func readAll(t *testing.T, name string, data []byte) ([]string, error) {
	t.Helper()
	r, err := NewReader(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	var out []string
	for {
		line, n, err := r.Next()
		if err != nil {
			return out, err
		}
		if n != len(out)+1 {
			t.Fatalf("line number %d after %d lines", n, len(out))
		}
		out = append(out, string(line))
	}
}

func TestRoundTrip(t *testing.T) {
	lines := testLines()
	for _, name := range []string{"r.jsonl", "r.jsonl.gz", "r.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(record(t, name, lines, len(lines)/3))
			if err != nil {
				t.Fatal(err)
			}
			switch CompressionOf(name) {
			case Gzip:
				if !bytes.HasPrefix(data, gzipMagic) {
					t.Error("a .gz recording does not start as gzip")
				}
			case Zstd:
				if !bytes.HasPrefix(data, zstdMagic) {
					t.Error("a .zst recording does not start as zstd")
				}
			default:
				if string(data) != strings.Join(lines, "\n")+"\n" {
					t.Error("a plain recording is not the lines as written")
				}
			}
			got, err := readAll(t, name, data)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("read ended with %v, want io.EOF", err)
			}
			if !slicesEqual(got, lines) {
				t.Fatalf("read %d lines, want the %d written", len(got), len(lines))
			}
		})
	}
}

// TestTornAnywhere cuts each recording at every offset of its last part,
// as a recorder killed while writing leaves it: what is read is always a
// prefix of what was written, everything of the frames before the cut is
// there, and the end is io.EOF (a cut between frames) or a TornError.
func TestTornAnywhere(t *testing.T) {
	lines := testLines()[:30] // small lines: every offset is tried
	for _, name := range []string{"r.jsonl", "r.jsonl.gz", "r.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(record(t, name, lines, 10))
			if err != nil {
				t.Fatal(err)
			}
			// The first two frames, whole: what a cut in the third must
			// still give.
			whole := record(t, name, lines[:20], 10)
			twoFrames, err := os.ReadFile(whole)
			if err != nil {
				t.Fatal(err)
			}
			torn := 0
			for cut := len(twoFrames); cut < len(data); cut++ {
				got, err := readAll(t, name, data[:cut])
				var tornErr *TornError
				switch {
				case errors.As(err, &tornErr):
					torn++
					if tornErr.Line != len(got)+1 || !strings.Contains(tornErr.Error(), "cut short") {
						t.Fatalf("cut at %d: %v after %d lines", cut, err, len(got))
					}
				case errors.Is(err, io.EOF):
				default:
					t.Fatalf("cut at %d: read ended with %v, want io.EOF or a TornError", cut, err)
				}
				if len(got) < 20 || !slicesEqual(got, lines[:len(got)]) {
					t.Fatalf("cut at %d: read %d lines, not a prefix of the 30 written that holds the first 20", cut, len(got))
				}
			}
			if torn == 0 {
				t.Error("no cut was reported torn")
			}
		})
	}
}

func TestOpenStdinAndMissing(t *testing.T) {
	data, err := os.ReadFile(record(t, "r.jsonl.zst", []string{`{"a":1}`, `{"b":2}`}, 1))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open("-", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if line, n, err := r.Next(); err != nil || n != 1 || string(line) != `{"a":1}` || r.Name() != "standard input" {
		t.Errorf("first line of stdin: %q %d %v (%s)", line, n, err, r.Name())
	}
	_ = r.Close()
	if _, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"), nil); err == nil || !strings.Contains(err.Error(), "cannot read the recording") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestCreateUnwritable(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no-such-dir", "r.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "cannot write the recording") {
		t.Errorf("an unwritable path: %v", err)
	}
}

func TestWriterCutsOnlyWhatWasWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWriter(f, Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Cut(); err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, path)
	for range 3 {
		if err := w.Cut(); err != nil {
			t.Fatal(err)
		}
	}
	if got := fileSize(t, path); got != size {
		t.Errorf("cuts with nothing written grew the file from %d to %d bytes", size, got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err == nil {
		t.Error("a write after Close succeeded")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCutTornThenAppend: a recording cut anywhere in its last frame (or
// line) is cut back to its whole parts, and what is appended after reads
// back after them.
func TestCutTornThenAppend(t *testing.T) {
	lines := testLines()[:30]
	for _, name := range []string{"r.jsonl", "r.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(record(t, name, lines, 10))
			if err != nil {
				t.Fatal(err)
			}
			whole, err := os.ReadFile(record(t, name, lines[:20], 10))
			if err != nil {
				t.Fatal(err)
			}
			for _, cut := range []int{len(whole) + 1, (len(whole) + len(data)) / 2, len(data) - 1} {
				path := filepath.Join(t.TempDir(), name)
				if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				keep, kept := len(whole), 20 // zstd: back to the whole frames
				if CompressionOf(name) == Plain {
					keep = bytes.LastIndexByte(data[:cut], '\n') + 1 // back to the whole lines
					kept = bytes.Count(data[:keep], []byte("\n"))
				}
				n, err := CutTorn(path)
				if err != nil || n != int64(cut-keep) {
					t.Fatalf("cut at %d: CutTorn cut %d bytes (%v), want %d", cut, n, err, cut-keep)
				}
				w, err := Append(path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte(`{"appended":true}` + "\n")); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(path)
				read, end := readAll(t, name, got)
				want := append(append([]string(nil), lines[:kept]...), `{"appended":true}`)
				if !errors.Is(end, io.EOF) || !slicesEqual(read, want) {
					t.Fatalf("cut at %d, then appended: %d lines (%v), want the %d whole ones and the appended one", cut, len(read), end, kept)
				}
			}
		})
	}
}

// TestANewRecordingIsPrivate: a recording holds the cluster's objects, so
// a new one is 0600; one appended to keeps its mode.
func TestANewRecordingIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl.zst")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("a new recording is %#o, want 0600", st.Mode().Perm())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err = Append(path); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ = os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("a recording appended to is %#o, want the 0644 it had", st.Mode().Perm())
	}
}

// TestReadSpanIsTheLatestLine: a recording's span ends at its latest
// line, not its last: a recorder killed right after catching up after a
// gap ends on records dated inside the gap. A torn end is left out.
func TestReadSpanIsTheLatestLine(t *testing.T) {
	data := strings.Join([]string{
		`{"type":"Recording","time":"2026-11-26T10:40:00Z","schema":"v1"}`,
		`{"type":"Heartbeat","time":"2026-11-26T10:40:05Z"}`,
		`{"type":"Recording","time":"2026-11-26T10:41:00Z","schema":"v1"}`,
		`{"type":"Gap","time":"2026-11-26T10:41:00Z","from":"2026-11-26T10:40:05Z","to":"2026-11-26T10:41:00Z"}`,
		`{"type":"Heartbeat","time":"2026-11-26T10:41:00.1Z"}`,
		`{"type":"Added","time":"2026-11-26T10:40:30Z","caughtUp":"creationTimestamp","name":"b"}`,
		`{"type":"Added","time":"2026-11-26T10:42:00Z","name":"torn"`,
	}, "\n")
	r, err := NewReader("rec.jsonl", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	span, err := ReadSpan(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := span.String(), "2026-11-26T10:40:00Z to 2026-11-26T10:41:00.1Z"; got != want {
		t.Errorf("span %s, want %s", got, want)
	}
}

// TestVerdictLineKeepsLogs: a Verdict line is nothing to play, and the
// logs of failing containers it holds are read with it, by context and
// UID; objects without logs add none.
func TestVerdictLineKeepsLogs(t *testing.T) {
	v := &printer.Verdict{Outcome: "Failed", Condition: "--fail-when=status=Failed", Objects: []printer.VerdictObject{
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "d1"},
		{Context: "prod", APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-1", UID: "p1",
			Logs: &printer.VerdictLogs{Container: "app", Previous: true, Lines: []string{"panic: \x1b[31mno\x1b[0m"}}},
		{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-2", UID: "p2",
			Logs: &printer.VerdictLogs{Container: "app", Unavailable: "forbidden"}},
	}}
	l, err := ParseLine("r", 7, printer.AppendVerdictJSON(nil, v))
	if err != nil {
		t.Fatal(err)
	}
	want := []ObjectLogs{
		{Context: "prod", UID: "p1", Logs: printer.VerdictLogs{Container: "app", Previous: true, Lines: []string{"panic: \x1b[31mno\x1b[0m"}}},
		{UID: "p2", Logs: printer.VerdictLogs{Container: "app", Unavailable: "forbidden"}},
	}
	if !l.Verdict || !l.Mark() || !reflect.DeepEqual(l.Logs, want) {
		t.Errorf("ParseLine = verdict %v, mark %v, logs %+v; want %+v", l.Verdict, l.Mark(), l.Logs, want)
	}
}
