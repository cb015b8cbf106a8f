package version

import (
	"runtime"
	"testing"
)

func TestGet(t *testing.T) {
	tests := []struct {
		name                  string
		version, commit, date string
		wantVersion           string
		wantCommit, wantDate  string
	}{
		{name: "goreleaser trims the v", version: "0.1.0", commit: "abc", date: "2026-11-21T20:48:40Z", wantVersion: "v0.1.0", wantCommit: "abc", wantDate: "2026-11-21T20:48:40Z"},
		{name: "snapshot", version: "0.1.1-SNAPSHOT-abc1234", wantVersion: "v0.1.1-SNAPSHOT-abc1234"},
		{name: "tag with v", version: "v1.2.3", wantVersion: "v1.2.3"},
		{name: "git describe without tags", version: "213550d", wantVersion: "213550d"},
		{name: "unset", wantVersion: "dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
			version, commit, date = tc.version, tc.commit, tc.date
			got := Get()
			if got.Version != tc.wantVersion {
				t.Errorf("Version = %q, want %q", got.Version, tc.wantVersion)
			}
			if tc.wantCommit != "" && got.Commit != tc.wantCommit {
				t.Errorf("Commit = %q, want %q", got.Commit, tc.wantCommit)
			}
			if tc.wantDate != "" && got.BuildDate != tc.wantDate {
				t.Errorf("BuildDate = %q, want %q", got.BuildDate, tc.wantDate)
			}
			// Without ldflags, a test binary records no VCS data: the
			// fallbacks apply.
			if tc.commit == "" && got.Commit == "" {
				t.Error("Commit is empty, want a value or \"unknown\"")
			}
			if got.GoVersion != runtime.Version() {
				t.Errorf("GoVersion = %q, want %q", got.GoVersion, runtime.Version())
			}
			if want := runtime.GOOS + "/" + runtime.GOARCH; got.Platform != want {
				t.Errorf("Platform = %q, want %q", got.Platform, want)
			}
		})
	}
}
