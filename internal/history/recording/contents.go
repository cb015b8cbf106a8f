package recording

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Contents is what a recording holds (kubectl deltas recording): read
// from a directory's index alone, or from a file read through. Its JSON
// is a documented record (docs/recording.md).
type Contents struct {
	Path string `json:"path"`
	// Kind is "directory" or "file".
	Kind string `json:"kind"`
	// Start and End are the time it spans; Records its records of changes
	// (not headers, Heartbeats, Gaps, Verdicts, checkpoints); Bytes its
	// size on disk.
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Records int64     `json:"records"`
	Bytes   int64     `json:"bytes"`
	// Checkpoints are where a look back can start (a directory's).
	Checkpoints int `json:"checkpoints"`
	// Gaps are the times nothing recorded: a recorder down, or segments
	// missing.
	Gaps []GapSpan `json:"gaps"`
	// Collections are what its headers say was watched; Servers, the API
	// servers they name (none in a recording made before they were
	// noted).
	Collections []Collection `json:"collections"`
	Servers     []APIServer  `json:"servers"`
	// Segments are a directory's, oldest first; Missing the numbers of
	// segments missing between two kept ones.
	Segments []SegmentContents `json:"segments,omitempty"`
	Missing  []int             `json:"missing,omitempty"`
	// RecordedBy is the pid of the recorder writing it now (0: none, or
	// not known); Recording says whether one is.
	Recording  bool `json:"recording"`
	RecordedBy int  `json:"recordedBy,omitempty"`
	// AsOf, for a directory a recorder is writing, is the time of the
	// index's last entry: what is said of the newest segment is as of then
	// (at most a minute behind).
	AsOf *time.Time `json:"asOf,omitempty"`
}

// addServers adds the servers a header names, once each.
func (s *Contents) addServers(servers []APIServer) {
	for _, server := range servers {
		if !slices.Contains(s.Servers, server) {
			s.Servers = append(s.Servers, server)
		}
	}
}

// GapSpan is one gap.
type GapSpan struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Segment is where it is said (a directory's).
	Segment string `json:"segment,omitempty"`
	// Why: "not recording" (a recorder down) or "segments missing".
	Why string `json:"why"`
}

// SegmentContents is one segment of a directory.
type SegmentContents struct {
	Name        string    `json:"name"`
	Seq         int       `json:"seq"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Records     int64     `json:"records"`
	Bytes       int64     `json:"bytes"`
	Checkpoints int       `json:"checkpoints"`
}

// ContentsOf says what the recording path holds: a directory from its
// index (rebuilt in memory when it must be, with a warning on warn), a
// file read through.
func ContentsOf(path string, warn io.Writer) (*Contents, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the recording: %w", err)
	}
	if st.IsDir() {
		return summarizeDir(path, warn)
	}
	return summarizeFile(path, st.Size())
}

func summarizeDir(dir string, warn io.Writer) (*Contents, error) {
	ix, err := LoadIndex(dir, warn, false)
	if err != nil {
		return nil, err
	}
	if len(ix.Infos) == 0 {
		return nil, fmt.Errorf("%s holds no segment: nothing recorded there yet", dir)
	}
	s := &Contents{Path: dir, Kind: "directory", Gaps: []GapSpan{}, Collections: []Collection{}, Servers: []APIServer{}}
	if busy := DirRecordedBy(dir); busy != nil {
		s.Recording, s.RecordedBy = true, busy.PID
	}
	for i, info := range ix.Infos {
		seg := SegmentContents{Name: info.Name, Seq: info.Seq, Start: info.Start, End: info.End, Records: info.Records, Checkpoints: len(info.Checkpoints)}
		if st, err := os.Stat(filepath.Join(dir, info.Name)); err == nil {
			seg.Bytes = st.Size()
		}
		s.Segments = append(s.Segments, seg)
		s.Records += seg.Records
		s.Bytes += seg.Bytes
		s.Checkpoints += seg.Checkpoints
		if i > 0 && info.Seq != ix.Infos[i-1].Seq+1 {
			for n := ix.Infos[i-1].Seq + 1; n < info.Seq; n++ {
				s.Missing = append(s.Missing, n)
			}
			s.Gaps = append(s.Gaps, GapSpan{From: ix.Infos[i-1].End, To: info.Start, Segment: info.Name, Why: "segments missing"})
		}
		for _, g := range info.Gaps {
			if g.From != nil {
				s.Gaps = append(s.Gaps, GapSpan{From: *g.From, To: g.Time, Segment: info.Name, Why: "not recording"})
			}
		}
		for _, c := range info.Targets {
			if !slices.Contains(s.Collections, c) {
				s.Collections = append(s.Collections, c)
			}
		}
		s.addServers(info.Servers)
		if s.Start.IsZero() || (!info.Start.IsZero() && info.Start.Before(s.Start)) {
			s.Start = info.Start
		}
		if info.End.After(s.End) {
			s.End = info.End
		}
	}
	if s.Recording {
		asOf := s.End
		s.AsOf = &asOf
	}
	return s, nil
}

// summarizeFile reads the recording file path through.
func summarizeFile(path string, size int64) (*Contents, error) {
	r, err := Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	s := &Contents{Path: path, Kind: "file", Bytes: size, Gaps: []GapSpan{}, Collections: []Collection{}, Servers: []APIServer{}}
	if busy := RecordedBy(path); busy != nil {
		s.Recording, s.RecordedBy = true, busy.PID
	}
	for {
		data, number, err := r.Next()
		var torn *TornError
		if errors.Is(err, io.EOF) || errors.As(err, &torn) {
			break
		}
		if err != nil {
			return nil, err
		}
		if t, err := lineTime(data); err == nil {
			if s.Start.IsZero() {
				s.Start = t
			}
			if t.After(s.End) {
				s.End = t
			}
		}
		switch {
		case IsRecordLine(data):
			s.Records++
		case bytes.HasPrefix(data, headerPrefixBytes), bytes.HasPrefix(data, gapPrefixBytes):
			l, err := ParseLine(path, number, data)
			if err != nil {
				return nil, err
			}
			if l.Header != nil {
				for _, c := range l.Header.Targets {
					if !slices.Contains(s.Collections, c) {
						s.Collections = append(s.Collections, c)
					}
				}
				s.addServers(l.Header.Servers)
			}
			if l.Gap != nil {
				s.Gaps = append(s.Gaps, GapSpan{From: l.Gap.From, To: l.Gap.To, Why: "not recording"})
			}
		}
	}
	if s.Start.IsZero() {
		return nil, fmt.Errorf("%s: no line with a time: not a recording of kubectl deltas", path)
	}
	return s, nil
}
