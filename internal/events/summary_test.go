package events

import (
	"testing"

	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
)

const scheduledEvent = `{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"web-7887448d46-6ftxj.18eb3da49d1f14e8","namespace":"demo","uid":"06e34259-e61e-4c59-ab7b-c4d3e64830ee","resourceVersion":"262","creationTimestamp":"2026-11-25T08:50:39Z"},"eventTime":"2026-11-25T08:50:39.123456Z","reportingController":"default-scheduler","reportingInstance":"default-scheduler-kwok","action":"Binding","reason":"Scheduled","regarding":{"kind":"Pod","namespace":"demo","name":"web-7887448d46-6ftxj","uid":"9e2a7c1e-1111-2222-3333-444455556666","apiVersion":"v1","resourceVersion":"250"},"note":"Successfully assigned demo/web-7887448d46-6ftxj to kwok-node-1","type":"Normal","deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}`

func parseEvent(t testing.TB, js string) *rawobj.Object {
	t.Helper()
	o, err := rawobj.Parse([]byte(js), rawobj.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSubjectOf(t *testing.T) {
	for _, tc := range []struct {
		event string
		want  Subject
	}{
		{scheduledEvent, Subject{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-7887448d46-6ftxj", UID: "9e2a7c1e-1111-2222-3333-444455556666"}},
		{`{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"Node","name":"n1","uid":"n1"}}`, Subject{Kind: "Node", Name: "n1", UID: "n1"}},
		{`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"regarding":null,"involvedObject":{"kind":"Pod","name":"p"}}`, Subject{Kind: "Pod", Name: "p"}},
		{`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"},"regarding":{"name":1}}`, Subject{}},
		{`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e"}}`, Subject{}},
	} {
		if got := subjectOf(parseEvent(t, tc.event)); got != tc.want {
			t.Errorf("subjectOf(%.80s…) = %+v, want %+v", tc.event, got, tc.want)
		}
	}
}

// BenchmarkSubjectOf is the work done for every Event of a watched
// namespace, shown or not.
func BenchmarkSubjectOf(b *testing.B) {
	o := parseEvent(b, scheduledEvent)
	b.ReportAllocs()
	for b.Loop() {
		if subjectOf(o).UID == "" {
			b.Fatal("no uid")
		}
	}
}
