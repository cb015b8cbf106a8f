package main

// The generator of long recordings for the history section: a day of
// Pods changing, written through the recorder's own code (a recording
// directory's segments, checkpoints and index) with each record made from
// a realistic Pod (podManifest) whose resourceVersion and one annotation
// change. No cluster: the records are what --record writes of such a
// stream, at the times given.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-deltas/kubectl-deltas/internal/cache"
	"github.com/kubectl-deltas/kubectl-deltas/internal/history/recording"
	"github.com/kubectl-deltas/kubectl-deltas/internal/informer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
)

// podTarget is the collection the generated recording watched.
var podTarget = informer.Target{
	Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: benchNamespace,
}

// genPod is one generated Pod's JSON in parts, between which its
// resourceVersion goes (in metadata, and in a revision annotation).
type genPod struct {
	name, uid string
	parts     [][]byte
}

// rvPlaceholder stands where a generated Pod's resourceVersion goes.
const rvPlaceholder = "RV-PLACEHOLDER"

// newGenPod is Pod i of the generator.
func newGenPod(i int) (genPod, error) {
	var pod map[string]any
	if err := json.Unmarshal(podManifest(i, fmt.Sprintf("node-%03d", i%100)), &pod); err != nil {
		return genPod{}, err
	}
	meta := pod["metadata"].(map[string]any)
	uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	meta["uid"], meta["resourceVersion"], meta["creationTimestamp"] = uid, rvPlaceholder, "2026-11-25T00:00:00Z"
	meta["annotations"].(map[string]any)["deltas.bench/revision"] = rvPlaceholder
	pod["status"] = map[string]any{
		"phase": "Running", "hostIP": "10.0.0.1", "podIP": fmt.Sprintf("10.1.%d.%d", i/250%250, i%250), "startTime": "2026-11-25T00:00:01Z",
		"conditions": []any{
			map[string]any{"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-25T00:00:01Z"},
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-25T00:00:05Z"},
			map[string]any{"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-25T00:00:05Z"},
			map[string]any{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-25T00:00:00Z"},
		},
	}
	data, err := json.Marshal(pod)
	if err != nil {
		return genPod{}, err
	}
	parts := bytes.Split(data, []byte(rvPlaceholder))
	if len(parts) != 3 {
		return genPod{}, fmt.Errorf("pod %d: the resourceVersion is not where it was put", i)
	}
	return genPod{name: podName(i), uid: uid, parts: parts}, nil
}

// genFiller fills the record of the generator's next change (set before
// each Record), as the record stage fills what a replay reads.
type genFiller struct {
	pod    *genPod
	rv     string
	object []byte
}

func (g *genFiller) Fill(rec *printer.Record, _ informer.Target, it *informer.Item, now time.Time) (bool, error) {
	*rec = printer.Record{
		Type: string(it.Type), Time: now, Initial: it.Initial, APIVersion: "v1", Kind: "Pod", Resource: "pods",
		Namespace: benchNamespace, Name: g.pod.name, UID: g.pod.uid, ResourceVersion: g.rv, Object: g.object,
	}
	return true, nil
}

// genRecording writes into the recording directory dir (new) a day of
// pods Pods: their initial list at start, then records-pods updates, one
// every every, each Pod in turn; the recorder ticks every 5 s of that
// time, as a live one does. policy is the directory's.
func genRecording(dir string, pods, records int, start time.Time, every time.Duration, policy recording.DirPolicy) error {
	if err := recording.PrepareDir(dir); err != nil {
		return err
	}
	lock, err := recording.LockDir(dir)
	if err != nil {
		return err
	}
	ix, err := recording.LoadIndex(dir, io.Discard, true)
	if err != nil {
		_ = lock.Unlock()
		return err
	}
	if len(ix.Segments) > 0 {
		_ = lock.Unlock()
		return fmt.Errorf("%s holds a recording: give a new directory", dir)
	}
	fill := &genFiller{}
	rec, err := recording.NewDirRecorder(dir, lock, ix, nil, policy, fill, io.Discard)
	if err != nil {
		return err
	}
	gen := make([]genPod, pods)
	for i := range gen {
		if gen[i], err = newGenPod(i); err != nil {
			return err
		}
	}
	if err := rec.BeginAt(start, []informer.Target{podTarget}, "bench", "", ""); err != nil {
		return err
	}
	rv := 1000
	var buf []byte
	change := func(p *genPod, typ cache.DeltaType, initial bool, now time.Time) error {
		rv++
		fill.pod, fill.rv = p, strconv.Itoa(rv)
		buf = append(buf[:0], p.parts[0]...)
		for _, part := range p.parts[1:] {
			buf = append(append(buf, fill.rv...), part...)
		}
		fill.object = bytes.Clone(buf) // the recorder keeps each object's last JSON
		return rec.Record(podTarget, []informer.Item{{Type: typ, Initial: initial, Key: benchNamespace + "/" + p.name}}, now)
	}
	for i := range gen {
		if err := change(&gen[i], cache.Replaced, true, start); err != nil {
			return err
		}
	}
	if err := rec.Tick(start); err != nil {
		return err
	}
	now, nextTick := start, start.Add(recording.HeartbeatInterval)
	for i := range records - pods {
		now = start.Add(time.Duration(i+1) * every)
		for !nextTick.After(now) {
			if err := rec.Tick(nextTick); err != nil {
				return err
			}
			nextTick = nextTick.Add(recording.HeartbeatInterval)
		}
		if err := change(&gen[i%pods], cache.Updated, false, now); err != nil {
			return err
		}
	}
	return rec.CloseAt(now)
}

// historyEvery is the time between two generated changes: 10 million
// in a day is about 115 a second.
const historyEvery = 24 * time.Hour / 10_000_000
