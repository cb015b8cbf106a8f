package otlp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Position is how far the collector has taken a recorded stream: the
// time of the newest record it acknowledged, and the ids of the records
// of that time it acknowledged (records of one time are made together; a
// batch may end among them). Every record before Time was acknowledged:
// the stream is sent in order. With --record, it is kept beside the
// recording (PositionPath), so that a run killed and started again on it
// sends again what the collector had not taken, and not what it had.
type Position struct {
	// Endpoint is the collector's: a position is of one collector.
	Endpoint string    `json:"endpoint"`
	Time     time.Time `json:"time"`
	IDs      []string  `json:"ids"`
}

// PositionPath is where the position of the recording record (a file,
// or a directory ending in "/") is kept: beside a file, FILE.otlp.json; in
// a directory, DIR/.otlp.json (a dot file, which the directory's reader
// passes over).
func PositionPath(record string, dir bool) string {
	if dir {
		return filepath.Join(record, ".otlp.json")
	}
	return record + ".otlp.json"
}

// ReadPosition reads the position at path; ok is false when there is
// none (nothing was acknowledged yet).
func ReadPosition(path string) (p Position, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Position{}, false, nil
	}
	if err != nil {
		return Position{}, false, fmt.Errorf("cannot read the collector's position %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Time.IsZero() {
		return Position{}, false, fmt.Errorf("%s is not a collector's position (%v): remove it to send the recording from its start", path, err)
	}
	return p, true, nil
}

// writePosition replaces the position at path: written whole beside it,
// then renamed over it, so that a kill leaves the old one or the new.
func writePosition(path string, p *Position) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("cannot keep the collector's position: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot keep the collector's position: %w", err)
	}
	return nil
}

// advance moves p past the acknowledged items, in the order sent.
func (p *Position) advance(batch []*item) {
	for _, it := range batch {
		switch {
		case it.time.After(p.Time):
			p.Time, p.IDs = it.time, append(p.IDs[:0], it.id)
		case it.time.Equal(p.Time) && !slices.Contains(p.IDs, it.id):
			p.IDs = append(p.IDs, it.id)
		}
	}
}

// taken reports whether the collector acknowledged a record of time t
// and id at p.
func (p *Position) taken(t time.Time, id string) bool {
	return t.Before(p.Time) || t.Equal(p.Time) && slices.Contains(p.IDs, id)
}

// Begin starts the export of a run (Start). With a recording (record not
// ""; dir when it is a directory) it keeps the collector's position
// beside it; when a run before this one exported the same recording to
// the same collector, what the recording holds after the position it
// reached is sent again first, by resend: a replay of the recording from
// from on, through feed (a ResendFeed). On an error, e is closed.
func (e *Exporter) Begin(ctx context.Context, record string, dir bool, resend func(ctx context.Context, feed *Feed, from time.Time) error) error {
	var again *Position
	if record != "" {
		path := PositionPath(record, dir)
		pos, found, err := ReadPosition(path)
		if err != nil {
			return err
		}
		if found && pos.Endpoint != e.cfg.Shown {
			fmt.Fprintf(e.errOut, "warning: %s says how far %s took the recording, not %s: what the recording holds is not sent to %s again (--replay=%s -q --otlp sends it)\n",
				path, pos.Endpoint, e.cfg.Shown, e.cfg.Shown, record)
			found = false
		}
		if err := e.KeepPosition(path, pos, found, time.Now()); err != nil {
			return err
		}
		if found {
			again = &pos
		}
	}
	if err := e.Start(ctx); err != nil || again == nil {
		return err
	}
	from := again.Time.Add(-time.Nanosecond)
	if err := resend(ctx, e.ResendFeed(ctx, *again, from), from); err != nil {
		_ = e.End()
		return err
	}
	return nil
}
