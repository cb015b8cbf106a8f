package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/replay"
)

// headerTargetOf describes t for a recording's header.
func headerTargetOf(t informer.Target) recording.Target {
	return recording.Target{
		Context: t.Context, APIVersion: t.Kind.GroupVersion().String(), Kind: t.Kind.Kind,
		Resource: t.Resource.Resource, Namespace: t.Namespace, Name: t.Name, Role: t.Role.String(),
	}
}

// Recorder writes the record of every delta a Sink is handed to a
// recording (--record), whatever the printed stream keeps of it: the
// delta types, the initial list, --where and --changed-only filter what is
// printed, not what is recorded, so that a replay can apply any of them
// later. A record carries what the run computes (health, owners, changes
// with --diff, context); Secrets are redacted unless --show-secret-data.
// Relisted objects that did not change are left out: they change nothing.
// It is used from the Sink's goroutine only.
type Recorder struct {
	stage *Stage
	w     *recording.Writer
	name  string
	// end, when the recording goes on, is where it had stopped.
	end *replay.End
	// created: the file did not exist before. begun: the header is
	// written. A recording created and never begun is removed on Close
	// (the run ended before it watched anything).
	created, begun bool
	rec            printer.Record
	buf            []byte
}

// CreateRecorder creates the recording name, or, when it is one already,
// resumes it: the run's part is appended, and each collection it recorded
// resumes from where the recording stopped (Resume). A recording that ends
// torn is cut back to its last whole part first, with a warning on warn.
// The Recorder writes nothing until Begin.
func CreateRecorder(name string, stage *Stage, warn io.Writer) (*Recorder, error) {
	st, err := os.Stat(name)
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return resumeRecorder(name, stage, warn)
	}
	created := errors.Is(err, fs.ErrNotExist)
	w, err := recording.Create(name)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	return &Recorder{stage: stage, w: w, name: name, created: created}, nil
}

// resumeRecorder is CreateRecorder of an existing recording.
func resumeRecorder(name string, stage *Stage, warn io.Writer) (*Recorder, error) {
	end, err := replay.ReadEnd(name, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("--record: %s is not a recording to go on with: %w; give a new file", name, err)
	}
	if end.Torn {
		cut, err := recording.CutTorn(name)
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		fmt.Fprintf(warn, "warning: --record: %s ended torn (its recorder was killed while writing): cut off its last %d bytes, the recording goes on from its last whole record\n", name, cut)
	}
	w, err := recording.Append(name)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	return &Recorder{stage: stage, w: w, name: name, end: end}, nil
}

// Resume is the engine's Config.Resume when the recording goes on: the
// state a recorded collection ends in, and the resourceVersion of its last
// record. A collection with no record (none was ever seen) is listed as
// usual.
func (r *Recorder) Resume(t informer.Target) (informer.Resumed, bool) {
	if r.end == nil {
		return informer.Resumed{}, false
	}
	res, ok := r.end.Resumes[t.ID()]
	return res, ok && res.ResourceVersion != ""
}

// Begin writes the header of the run's part of the recording: now, the
// build's version, what is watched (targets) and with which selectors.
func (r *Recorder) Begin(targets []informer.Target, version, labelSelector, fieldSelector string) error {
	if r.end != nil {
		for _, t := range targets {
			if t.Role != informer.RoleRoot {
				continue
			}
			if !slices.ContainsFunc(r.end.Recorded, func(o informer.Target) bool { return o.ID() == t.ID() }) {
				return fmt.Errorf("--record: %s recorded %s; this run also watches %s, which it did not: record it to a new file, or watch what it recorded", r.name, replay.Describe(r.end.Recorded), replay.Describe([]informer.Target{t}))
			}
		}
	}
	h := recording.Header{
		Type: recording.HeaderType, Time: time.Now().UTC(), Schema: recording.Schema, Version: version,
		LabelSelector: labelSelector, FieldSelector: fieldSelector,
	}
	for _, t := range targets {
		h.Targets = append(h.Targets, headerTargetOf(t))
	}
	line, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	if _, err := r.w.Write(append(line, '\n')); err != nil {
		return err
	}
	r.begun = true
	return nil
}

// Record writes the records of items, deltas of an informer watching t
// popped at now.
func (r *Recorder) Record(t informer.Target, items []informer.Item, now time.Time) error {
	r.buf = r.buf[:0]
	for i := range items {
		keep, err := r.stage.Fill(&r.rec, t, &items[i], now)
		if err != nil {
			return err
		}
		if keep {
			r.buf = append(printer.AppendJSON(r.buf, &r.rec), '\n')
		}
	}
	if len(r.buf) == 0 {
		return nil
	}
	_, err := r.w.Write(r.buf) // one write a batch: a frame ends between batches
	return err
}

// Close ends the recording: its last frame is written and the file
// closed; a recording never begun is removed.
func (r *Recorder) Close() error {
	err := r.w.Close()
	if r.created && !r.begun {
		_ = os.Remove(r.name)
	}
	return err
}
