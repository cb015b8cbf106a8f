package cmd

import (
	"os"

	"github.com/kubectl-deltas/kubectl-deltas/internal/stage"
	"github.com/kubectl-deltas/kubectl-deltas/internal/timeline"
)

// page is the page of --timeline and the stage that describes the records
// it is handed.
type page struct {
	*timeline.Timeline
	stage *stage.Stage
}

// newPage creates the page of --timeline (nil without): its file written
// once now, before any request.
func (o *DeltasOptions) newPage() (*page, error) {
	if !o.Timeline.Active() {
		return nil, nil
	}
	st, err := o.Records.ToObserverStage(o.Records.Judges(true, o.ListWatch.MetadataOnly))
	if err != nil {
		return nil, err
	}
	tl, err := o.Timeline.ToTimeline(os.Args[1:], o.replayClock())
	if err != nil {
		return nil, err
	}
	return &page{Timeline: tl, stage: st}, nil
}
