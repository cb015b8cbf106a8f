//go:build dist

// The archives of a local release (make dist), installed with krew: run by
// make validate-krew-manifest DIST=dist, which sets the dist tag and
// DELTAS_DIST.

package krew

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestKrewInstallDist installs the manifest with krew from goreleaser's
// own archives, with the sha256 of its checksums.txt, for every platform
// (DELTAS_DIST=dist, after "make dist"); the host's plugin also runs.
func TestKrewInstallDist(t *testing.T) {
	dist := os.Getenv("DELTAS_DIST")
	if dist == "" {
		t.Fatal("set DELTAS_DIST to goreleaser's dist directory: make validate-krew-manifest DIST=dist")
	}
	tl := krewTools(t)
	if !filepath.IsAbs(dist) {
		dist = filepath.Join(repoRoot, dist)
	}
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := Checksums(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := loadManifest(t)
	c := loadGoreleaser(t)
	for _, pa := range c.Targets() {
		t.Run(pa.String(), func(t *testing.T) {
			pl, err := PlatformFor(p, pa)
			if err != nil {
				t.Fatal(err)
			}
			sum, ok := ChecksumFor(sums, pl.URI)
			if !ok {
				t.Fatalf("checksums.txt has no archive for %s", ArchiveName(pl))
			}
			var archive string
			for name, s := range sums {
				if s == sum {
					archive = filepath.Join(dist, name)
				}
			}
			wantVersion := ""
			if pa == (OSArch{runtime.GOOS, runtime.GOARCH}) {
				wantVersion = "v" // a snapshot's version is not the manifest's
			}
			installAndRun(t, tl, p, c, pa, archive, sum, wantVersion)
		})
	}
}
