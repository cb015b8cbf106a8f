package informer

import "testing"

// TestGCPercent: --metadata-only lowers the garbage collector's target of
// the run, unless GOGC is set.
func TestGCPercent(t *testing.T) {
	tests := []struct {
		name         string
		metadataOnly bool
		gogc         string
		want         int
	}{
		{"whole objects", false, "", 0},
		{"metadata only", true, "", metadataOnlyGCPercent},
		{"metadata only, GOGC set", true, "200", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewListWatchFlags()
			f.MetadataOnly = tc.metadataOnly
			getenv := func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			}
			if got := f.gcPercent(getenv); got != tc.want {
				t.Errorf("got GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
