package cmd

import (
	"os"

	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// newObservers builds, before any request, what the record Sink hands
// each record the stream shows beside printing it — the page of
// --timeline (its file written once now), the view of --live, or both —
// and the stage that completes those records with health and changes.
func (o *DeltasOptions) newObservers() error {
	var tee stage.Tee
	if o.Timeline.Active() {
		tl, err := o.Timeline.ToTimeline(os.Args[1:], o.replayClock())
		if err != nil {
			return err
		}
		o.page, tee = tl, append(tee, tl)
	}
	if o.live != nil {
		tee = append(tee, o.live.View)
	}
	if len(tee) == 0 {
		return nil
	}
	o.observer = tee
	if len(tee) == 1 {
		o.observer = tee[0]
	}
	var err error
	o.observed, err = o.Records.ToObserverStage(o.Records.Judges(true, o.ListWatch.MetadataOnly))
	return err
}
