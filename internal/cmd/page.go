package cmd

import (
	"os"

	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
)

// newObservers builds, before any request, what the record Sink hands
// each record the stream shows beside printing it — the page of
// --timeline (its file written once now), the view of --live, or both —
// and the stage that completes those records with health and changes.
func (r *run) newObservers() error {
	var tee stage.Tee
	if r.Timeline.Active() {
		tl, err := r.Timeline.ToTimeline(os.Args[1:], r.replayClock())
		if err != nil {
			return err
		}
		r.page, tee = tl, append(tee, tl)
	}
	if r.live != nil {
		tee = append(tee, r.live.View)
	}
	if len(tee) == 0 {
		return nil
	}
	r.observer = tee
	if len(tee) == 1 {
		r.observer = tee[0]
	}
	var err error
	r.observed, err = r.Records.ToObserverStage(r.Records.Judges(true, r.ListWatch.MetadataOnly))
	return err
}
