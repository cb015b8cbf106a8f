// Package version reports the build of kubectl-deltas: set by the release
// build with -ldflags "-X …/internal/version.version=v1.2.3 …", read from
// the module's build info for `go install` builds.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
)

// Set by -ldflags -X at release time.
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// bareSemver matches a semantic version without its "v": goreleaser's
// {{.Version}} is the tag with the "v" trimmed.
var bareSemver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)

// Get returns the build information: the ldflags values when set, else
// what the Go toolchain recorded ("dev"/"unknown" when nothing is known).
// Versions are printed with their "v", as kubectl, krew and go install do.
func Get() Info {
	info := Info{
		Version:   version,
		Commit:    commit,
		BuildDate: date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.BuildDate == "" {
					info.BuildDate = s.Value
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if bareSemver.MatchString(info.Version) {
		info.Version = "v" + info.Version
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.BuildDate == "" {
		info.BuildDate = "unknown"
	}
	return info
}

// Text is the build as kubectl deltas version --client prints it, one
// "Key: value" line each.
func (i Info) Text() string {
	return fmt.Sprintf("Client Version: %s\nGit Commit: %s\nBuild Date: %s\nGo Version: %s\nPlatform: %s\n",
		i.Version, i.Commit, i.BuildDate, i.GoVersion, i.Platform)
}
