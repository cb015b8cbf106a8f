package main

import (
	"slices"
	"testing"
)

func TestPodIndex(t *testing.T) {
	tests := []struct {
		name string
		line string
		want int
		ok   bool
	}{
		{name: "json", line: `{"type":"MODIFIED","object":{"metadata":{"name":"bench-pod-000042"}}}`, want: 42, ok: true},
		{name: "first name wins", line: `{"name":"bench-pod-000007","object":{"metadata":{"name":"bench-pod-000007"}}}`, want: 7, ok: true},
		{name: "table row", line: `bench   bench-pod-149999   2/2   Running   0   5m`, want: 149999, ok: true},
		{name: "other object", line: `Updated: kube-system/coredns`, ok: false},
		{name: "cut short", line: `bench-pod-12`, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := podIndex([]byte(tt.line))
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("podIndex(%q) = %d, %v; want %d, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestLineMatcher(t *testing.T) {
	m := newLineMatcher(3)
	// Before activation (the initial sync) nothing counts, and a line cut
	// across reads is finished later.
	m.tee([]byte(podName(0) + "\n" + podName(1)))
	m.tee([]byte(" rest of the sync line\n"))
	if got := m.count(); got != 0 {
		t.Fatalf("lines before activation = %d, want 0", got)
	}
	m.activate()
	m.tee([]byte("Updated: bench/" + podName(2)))
	m.tee([]byte("\nUpdated: bench/" + podName(2) + "\nUpdated: kube-system/x\n"))
	if got := m.count(); got != 2 {
		t.Fatalf("lines = %d, want 2", got)
	}
	// The arrivals are replaced by known times to check the pairing: the
	// writes come in the writers' order, not the responses'.
	m.arrivals[2] = []int64{100e6, 300e6}
	writes := []write{{pod: 2, resp: 250e6}, {pod: 2, resp: 90e6}, {pod: 1, resp: 50e6}}
	got := m.delays(writes)
	want := delayStats{Lines: 2, Matched: 2, Missing: 1, P50MS: 10, P99MS: 10, MaxMS: 50}
	if got != want {
		t.Errorf("delays = %+v, want %+v", got, want)
	}
	m.reset()
	if got := m.count(); got != 0 || len(m.arrivals[2]) != 0 {
		t.Errorf("after reset: %d lines, arrivals %v; want none", got, m.arrivals[2])
	}
}

func TestParseRates(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{in: "1000,max", want: []int{1000, 0}},
		{in: " 500 ", want: []int{500}},
		{in: "fast", wantErr: true},
		{in: "-3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseRates(tt.in)
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Errorf("parseRates(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
