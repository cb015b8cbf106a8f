package replay

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/recording"
)

// Given are the flags of other groups that a replay must refuse: each
// asks a server, or is not replayed yet.
type Given struct {
	// ServerOnly are the names of the given flags that only mean
	// something to a server (--resource-version, --chunk-size, …).
	ServerOnly []string
	// Record, Tree and Events: --record, --tree, --events.
	Record, Tree, Events bool
}

// ValidateWith checks what a replay cannot do with the other flags given.
func (f *Flags) ValidateWith(g Given) error {
	if !f.Active() {
		return nil
	}
	switch {
	case len(g.ServerOnly) > 0:
		return fmt.Errorf("%s asks a server, and --replay plays a recording: drop one of them (--context picks contexts of the recording)", g.ServerOnly[0])
	case g.Record:
		return errors.New("--record cannot be used with --replay: the recording is already one")
	case g.Tree:
		return errors.New("--tree is not replayed yet: replay the recording without --tree (its records carry their owners)")
	case g.Events:
		return errors.New("--events is not replayed yet: the recorded Events are records of kind Event, replayed as such when the run watched them as a type")
	}
	return nil
}

// OpenFlags opens the recording of the flags (stdin for "-") and reads
// its header and initial lists, and its span for --at, --from and --to.
// warn receives the replay's warnings. Close the Player when done.
func OpenFlags(f *Flags, stdin io.Reader, warn io.Writer) (*Player, error) {
	name := f.Files[0]
	r, err := recording.Open(name, stdin)
	if err != nil {
		return nil, fmt.Errorf("--replay: %w", err)
	}
	p, err := Open(r, warn)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	if f.Looking() {
		if err := p.window(f, name); err != nil {
			_ = r.Close()
			return nil, err
		}
	}
	return p, nil
}

// window reads --at, --from and --to against the recording's span: a
// file is read through once more for its end; standard input's end is
// not known.
func (p *Player) window(f *Flags, name string) error {
	span := Span{Start: p.header.Time, End: p.header.Time}
	hasEnd := name != "-"
	if hasEnd {
		r, err := recording.Open(name, nil)
		if err != nil {
			return fmt.Errorf("--replay: %w", err)
		}
		span, err = ReadSpan(r)
		_ = r.Close()
		if err != nil {
			return err
		}
	}
	from, to, err := f.Window(span, hasEnd)
	if err != nil {
		return err
	}
	p.SetWindow(from, to)
	return nil
}

// Close closes the recording.
func (p *Player) Close() error { return p.r.Close() }

// Contexts are the contexts the recording names, in order ("" for a
// recording of one cluster is left out).
func (p *Player) Contexts() []string {
	var out []string
	for _, t := range p.recorded {
		if t.Context != "" && !slices.Contains(out, t.Context) {
			out = append(out, t.Context)
		}
	}
	return out
}

// Engine picks the recorded collections of args in namespace ("": all)
// and contexts (none: all), with the objects selector keeps ("": all),
// and returns the engine that plays them, its informers added.
func (p *Player) Engine(args []Arg, namespace string, contexts []string, selector string, warn io.Writer) (*informer.Engine, []informer.Target, error) {
	ts, err := Pick(p.recorded, args, namespace, contexts, p.r.Name())
	if err != nil {
		return nil, nil, err
	}
	var sel labels.Selector
	if selector != "" {
		if sel, err = labels.Parse(selector); err != nil {
			return nil, nil, fmt.Errorf("invalid --selector %q: %w", selector, err)
		}
	}
	if err := p.Select(ts, sel); err != nil {
		return nil, nil, err
	}
	engine := informer.New(informer.Config{NewListerWatcher: p.NewListerWatcher, Clock: p.Clock(), NewBackoff: p.NewBackoff}, warn)
	for _, t := range ts {
		if _, err := engine.Add(t); err != nil {
			return nil, nil, err
		}
	}
	return engine, ts, nil
}
