package krew

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The repository's files, relative to this package.
const (
	manifestPath   = "../../plugin.yaml"
	templatePath   = "../../.krew.yaml"
	goreleaserPath = "../../.goreleaser.yaml"
	repoRoot       = "../.."
	pluginName     = "deltas"
)

func loadManifest(t *testing.T) *Plugin {
	t.Helper()
	p, err := Load(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadGoreleaser(t *testing.T) *GoreleaserConfig {
	t.Helper()
	c, err := LoadGoreleaser(goreleaserPath)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// plugin.yaml follows krew's and krew-index's rules.
func TestManifestValid(t *testing.T) {
	p := loadManifest(t)
	if err := Validate(p, pluginName); err != nil {
		t.Fatalf("plugin.yaml is not a valid krew manifest:\n%v", err)
	}
	for _, pl := range p.Spec.Platforms {
		if pl.Sha256 == PlaceholderSha256 {
			t.Logf("plugin.yaml has placeholder checksums: %s is not released yet", p.Spec.Version)
			break
		}
	}
}

// plugin.yaml is exactly .krew.yaml rendered for its version, as
// krew-release-bot renders it: the template is the one source of truth.
func TestManifestMatchesTemplate(t *testing.T) {
	p := loadManifest(t)
	want, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	placeholder := false
	for _, pl := range p.Spec.Platforms {
		sums[pl.URI] = pl.Sha256
		placeholder = placeholder || pl.Sha256 == PlaceholderSha256
	}
	tmpl, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := Render(tmpl, p.Spec.Version, func(uri string) (string, error) {
		if s, ok := sums[uri]; ok {
			return s, nil
		}
		return "", fmt.Errorf("plugin.yaml has no platform with uri %s", uri)
	})
	if err != nil {
		t.Fatalf("%v\nrun \"make krew-manifest\" after changing .krew.yaml", err)
	}
	got := append([]byte(ManifestHeader(placeholder)), rendered...)
	if !bytes.Equal(got, want) {
		t.Errorf("plugin.yaml is not .krew.yaml rendered for %s: run \"make krew-manifest\"\n--- rendered\n%s\n--- plugin.yaml\n%s", p.Spec.Version, got, want)
	}
}

// The manifest offers exactly the platforms goreleaser builds, downloads
// the archives goreleaser names, and extracts files those archives hold.
func TestManifestMatchesGoreleaser(t *testing.T) {
	p := loadManifest(t)
	c := loadGoreleaser(t)
	targets := c.Targets()
	if len(p.Spec.Platforms) != len(targets) {
		t.Errorf("plugin.yaml has %d platforms, goreleaser builds %d: %v", len(p.Spec.Platforms), len(targets), targets)
	}
	for _, pa := range targets {
		t.Run(pa.String(), func(t *testing.T) {
			pl, err := PlatformFor(p, pa)
			if err != nil {
				t.Fatal(err)
			}
			d := templateData(c, p.Spec.Version, pa)
			name, err := c.ArchiveName(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := ArchiveName(pl); got != name {
				t.Errorf("uri downloads %s, goreleaser makes %s", got, name)
			}
			wantURI := "https://github.com/kubectl-deltas/kubectl-deltas/releases/download/" + p.Spec.Version + "/" + name
			if pl.URI != wantURI {
				t.Errorf("uri = %s, want %s", pl.URI, wantURI)
			}
			if want := c.BinaryName(pa.OS); pl.Bin != want {
				t.Errorf("bin = %q, goreleaser's binary is %q", pl.Bin, want)
			}
			contents, err := c.ArchiveContents(repoRoot, d)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range pl.Files {
				if !containsMatch(contents, f.From) {
					t.Errorf("files: from %q matches nothing in the archive %v", f.From, contents)
				}
			}
			for _, want := range []string{"LICENSE", "README.md"} {
				if !containsMatch(contents, want) {
					t.Errorf("the archive lacks %s: %v", want, contents)
				}
			}
		})
	}
}

func containsMatch(names []string, glob string) bool {
	for _, n := range names {
		if ok, _ := filepath.Match(glob, n); ok {
			return true
		}
	}
	return false
}

// templateData is what goreleaser's templates see when releasing tag.
func templateData(c *GoreleaserConfig, tag string, pa OSArch) TemplateData {
	commit := "0000000000000000000000000000000000000000"
	if out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	now := time.Now().UTC().Truncate(time.Second)
	return TemplateData{
		ProjectName:     c.ProjectName,
		Tag:             tag,
		Version:         strings.TrimPrefix(tag, "v"),
		FullCommit:      commit,
		ShortCommit:     commit[:7],
		CommitDate:      now.Format(time.RFC3339),
		CommitTimestamp: now.Unix(),
		Os:              pa.OS,
		Arch:            pa.Arch,
	}
}

// TestKrewInstallFromLocalArchive does what "kubectl krew install
// --manifest=plugin.yaml --archive=…" does, offline: it builds the host's
// archive as goreleaser would, points a copy of plugin.yaml at it
// (file:// uri and its real sha256), installs it into a fresh KREW_ROOT,
// and runs the installed plugin.
func TestKrewInstallFromLocalArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	p := loadManifest(t)
	c := loadGoreleaser(t)
	host := OSArch{runtime.GOOS, runtime.GOARCH}
	work := t.TempDir()
	d := templateData(c, p.Spec.Version, host)
	archive, err := c.BuildArchive(repoRoot, work, d)
	if err != nil {
		t.Fatal(err)
	}
	if pl, err := PlatformFor(p, host); err != nil {
		t.Fatal(err)
	} else if ArchiveName(pl) != filepath.Base(archive) {
		t.Fatalf("the manifest downloads %s, the build made %s", ArchiveName(pl), filepath.Base(archive))
	}
	installAndRun(t, p, host, archive, "", p.Spec.Version)
}

// TestKrewInstallDist installs the manifest from goreleaser's own
// archives, with the sha256 of its checksums.txt, for every platform
// (DELTAS_DIST=dist, after "make dist"); the host's plugin also runs.
func TestKrewInstallDist(t *testing.T) {
	dist := os.Getenv("DELTAS_DIST")
	if dist == "" {
		t.Skip("set DELTAS_DIST to goreleaser's dist directory (make validate-krew-manifest DIST=dist)")
	}
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
	for _, pa := range loadGoreleaser(t).Targets() {
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
			installAndRun(t, p, pa, archive, sum, wantVersion)
		})
	}
}

// installAndRun installs p for pa from archive (sum: the sha256 to put in
// the manifest, "" to compute it) and, if wantVersion is set, runs
// "kubectl-deltas version --client" and checks the version starts with
// wantVersion.
func installAndRun(t *testing.T, p *Plugin, pa OSArch, archive, sum, wantVersion string) {
	t.Helper()
	archive, err := filepath.Abs(archive)
	if err != nil {
		t.Fatal(err)
	}
	if sum == "" {
		if sum, err = FileSha256(archive); err != nil {
			t.Fatal(err)
		}
	}
	if err := VerifySha256(archive, sum); err != nil {
		t.Fatal(err)
	}
	local := *p
	local.Spec.Platforms = append([]Platform(nil), p.Spec.Platforms...)
	for i := range local.Spec.Platforms {
		if Matches(local.Spec.Platforms[i].Selector, pa) {
			local.Spec.Platforms[i].URI = "file://" + filepath.ToSlash(archive)
			local.Spec.Platforms[i].Sha256 = sum
		}
	}
	if err := Validate(&local, pluginName); err != nil {
		t.Fatalf("the local manifest is invalid: %v", err)
	}

	root := t.TempDir()
	inst, err := Install(&local, pa, root)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	for _, f := range []string{"LICENSE", "kubectl_complete-deltas"} {
		if pa.OS == "windows" && f == "kubectl_complete-deltas" {
			f += ".cmd"
		}
		if _, err := os.Stat(filepath.Join(inst.Dir, f)); err != nil {
			t.Errorf("%s was not installed: %v", f, err)
		}
	}
	if wantVersion == "" {
		return
	}

	out, err := exec.Command(inst.Link, "version", "--client").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl-deltas version --client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Client Version: "+wantVersion) {
		t.Errorf("version --client printed:\n%s\nwant \"Client Version: %s…\"", out, wantVersion)
	}
	out, err = exec.Command(inst.Link, "version", "--client", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubectl-deltas version --client -o json: %v", err)
	}
	var v struct {
		ClientVersion struct {
			Version, Commit, BuildDate string
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if !strings.HasPrefix(v.ClientVersion.Version, wantVersion) || v.ClientVersion.Commit == "unknown" || v.ClientVersion.BuildDate == "unknown" {
		t.Errorf("version -o json = %+v, want version %s… with commit and build date set by ldflags", v.ClientVersion, wantVersion)
	}
}

// A manifest that is right in every respect, for the rejection cases.
func validManifest() *Plugin {
	platform := func(goos, goarch string) Platform {
		bin := "kubectl-deltas"
		ext := ".tar.gz"
		if goos == "windows" {
			bin += ".exe"
			ext = ".zip"
		}
		return Platform{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": goos, "arch": goarch}},
			URI:      "https://example.invalid/kubectl-deltas_v1.0.0_" + goos + "_" + goarch + ext,
			Sha256:   strings.Repeat("ab", 32),
			Bin:      bin,
			Files:    []FileOperation{{From: bin, To: "."}, {From: "LICENSE", To: "."}},
		}
	}
	return &Plugin{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   metav1.ObjectMeta{Name: "deltas"},
		Spec: Spec{
			Version:          "v1.0.0",
			Homepage:         "https://example.invalid/deltas",
			ShortDescription: "Watch resources and print every informer delta",
			Description:      "Longer text.\n",
			Platforms:        []Platform{platform("linux", "amd64"), platform("darwin", "arm64"), platform("windows", "amd64")},
		},
	}
}

func TestManifestValidateRejects(t *testing.T) {
	if err := Validate(validManifest(), "deltas"); err != nil {
		t.Fatalf("the valid manifest is rejected: %v", err)
	}
	tests := []struct {
		name   string
		modify func(*Plugin)
		want   string
	}{
		{"api version", func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, "apiVersion"},
		{"kind", func(p *Plugin) { p.Kind = "Plug" }, "kind"},
		{"unsafe name", func(p *Plugin) { p.Metadata.Name = "del tas" }, "not allowed"},
		{"reserved name", func(p *Plugin) { p.Metadata.Name = "con" }, "not allowed"},
		{"other name", func(p *Plugin) { p.Metadata.Name = "deltaz" }, `want "deltas"`},
		{"kubectl prefix", func(p *Plugin) { p.Metadata.Name = "kubectl-deltas" }, "must not start"},
		{"version without v", func(p *Plugin) { p.Spec.Version = "1.0.0" }, `start with "v"`},
		{"version not semver", func(p *Plugin) { p.Spec.Version = "v1.0" }, "semantic version"},
		{"no homepage", func(p *Plugin) { p.Spec.Homepage = "" }, "homepage"},
		{"no short description", func(p *Plugin) { p.Spec.ShortDescription = "" }, "shortDescription is required"},
		{"long short description", func(p *Plugin) { p.Spec.ShortDescription = strings.Repeat("word ", 11) }, "keep it to"},
		{"short description period", func(p *Plugin) { p.Spec.ShortDescription = "Watch resources." }, "period"},
		{"short description two lines", func(p *Plugin) { p.Spec.ShortDescription = "Watch\nresources" }, "one line"},
		{"short description says kubectl", func(p *Plugin) { p.Spec.ShortDescription = "A kubectl plugin for deltas" }, "mention kubectl"},
		{"no description", func(p *Plugin) { p.Spec.Description = "" }, "description is required"},
		{"long caveats line", func(p *Plugin) { p.Spec.Caveats = strings.Repeat("word ", 20) }, "caveats has a line"},
		{"no platforms", func(p *Plugin) { p.Spec.Platforms = nil }, "platforms is empty"},
		{"no uri", func(p *Plugin) { p.Spec.Platforms[0].URI = "" }, "uri is required"},
		{"http uri", func(p *Plugin) { p.Spec.Platforms[0].URI = "http://example.invalid/a.tar.gz" }, "https"},
		{"uri not an archive", func(p *Plugin) { p.Spec.Platforms[0].URI = "https://example.invalid/a.exe" }, ".tar.gz or .zip"},
		{"short sha256", func(p *Plugin) { p.Spec.Platforms[0].Sha256 = "abc" }, "64 lower-case"},
		{"upper-case sha256", func(p *Plugin) { p.Spec.Platforms[0].Sha256 = strings.Repeat("AB", 32) }, "64 lower-case"},
		{"no bin", func(p *Plugin) { p.Spec.Platforms[0].Bin = "" }, "bin is required"},
		{"bin not extracted", func(p *Plugin) { p.Spec.Platforms[0].Bin = "other" }, "not extracted"},
		{"exe on linux", func(p *Plugin) {
			p.Spec.Platforms[0].Bin = "kubectl-deltas.exe"
			p.Spec.Platforms[0].Files[0].From = "kubectl-deltas.exe"
		}, "end in .exe"},
		{"no exe on windows", func(p *Plugin) {
			p.Spec.Platforms[2].Bin = "kubectl-deltas"
			p.Spec.Platforms[2].Files[0].From = "kubectl-deltas"
		}, "end in .exe"},
		{"empty files", func(p *Plugin) { p.Spec.Platforms[0].Files = []FileOperation{} }, "left out or not empty"},
		{"files without to", func(p *Plugin) { p.Spec.Platforms[0].Files[1].To = "" }, "needs both"},
		{"files to unclean", func(p *Plugin) { p.Spec.Platforms[0].Files[1].To = "./" }, "not a clean path"},
		{"files to outside", func(p *Plugin) { p.Spec.Platforms[0].Files[1].To = "../x" }, "leaves the installation"},
		{"no license", func(p *Plugin) { p.Spec.Platforms[0].Files = p.Spec.Platforms[0].Files[:1] }, "LICENSE"},
		{"no selector", func(p *Plugin) { p.Spec.Platforms[0].Selector = nil }, "selector is required"},
		{"empty selector", func(p *Plugin) { p.Spec.Platforms[0].Selector = &metav1.LabelSelector{} }, "selector is empty"},
		{"unknown selector key", func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["distro"] = "debian" }, `key "distro"`},
		{"selects nothing", func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["os"] = "plan9" }, "matches no supported platform"},
		{"overlap", func(p *Plugin) {
			p.Spec.Platforms[1].Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "os", Operator: metav1.LabelSelectorOpIn, Values: []string{"linux", "darwin"}},
			}}
		}, "overlap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validManifest()
			tc.modify(p)
			err := Validate(p, "deltas")
			if err == nil {
				t.Fatalf("Validate accepted the manifest, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate error:\n%v\nwant one containing %q", err, tc.want)
			}
		})
	}
}

func TestManifestParseStrict(t *testing.T) {
	_, err := Parse([]byte("apiVersion: x\nkind: Plugin\nmetadata: {name: deltas}\nspec:\n  version: v1.0.0\n  shortDesc: typo\n  platforms: []\n"))
	if err == nil || !strings.Contains(err.Error(), "shortDesc") {
		t.Errorf("Parse error = %v, want one naming the unknown field shortDesc", err)
	}
}

func TestManifestRender(t *testing.T) {
	tmpl := []byte(`spec:
  version: {{ .TagName }}
  platforms:
  - bin: x
    {{addURIAndSha "https://example.invalid/{{ .TagName }}/x_{{ .Version }}_linux.tar.gz" .TagName }}
  - {{ addURIAndSha "https://example.invalid/{{ .TagName }}/x.zip" .TagName | indent 4 }}
`)
	got, err := Render(tmpl, "v1.2.3", func(uri string) (string, error) { return "sum-of-" + uri, nil })
	if err != nil {
		t.Fatal(err)
	}
	want := `spec:
  version: v1.2.3
  platforms:
  - bin: x
    uri: https://example.invalid/v1.2.3/x_1.2.3_linux.tar.gz
    sha256: sum-of-https://example.invalid/v1.2.3/x_1.2.3_linux.tar.gz
  - uri: https://example.invalid/v1.2.3/x.zip
    sha256: sum-of-https://example.invalid/v1.2.3/x.zip
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Render([]byte(`{{ addURIAndSha "u" .TagName }}`), "v1", func(string) (string, error) { return "", fmt.Errorf("no sum") }); err == nil {
		t.Error("Render ignored a checksum error")
	}
}

func TestManifestChecksums(t *testing.T) {
	sums, err := Checksums(strings.NewReader(strings.Repeat("a", 64) + "  kubectl-deltas_v0.0.0_linux_amd64.tar.gz\n" +
		strings.Repeat("b", 64) + " *kubectl-deltas_v0.0.0_windows_amd64.zip\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri, want string
		ok        bool
	}{
		{"https://x/v0.0.0/kubectl-deltas_v0.0.0_linux_amd64.tar.gz", strings.Repeat("a", 64), true},
		{"https://x/v0.1.0/kubectl-deltas_v0.1.0_linux_amd64.tar.gz", strings.Repeat("a", 64), true},
		{"https://x/v0.1.0/kubectl-deltas_v0.1.0_windows_amd64.zip", strings.Repeat("b", 64), true},
		{"https://x/v0.1.0/kubectl-deltas_v0.1.0_darwin_amd64.tar.gz", "", false},
	}
	for _, tc := range tests {
		got, ok := ChecksumFor(sums, tc.uri)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ChecksumFor(%s) = %q, %v; want %q, %v", tc.uri, got, ok, tc.want, tc.ok)
		}
	}
	if _, err := Checksums(strings.NewReader("nothex  file\n")); err == nil {
		t.Error("Checksums accepted a bad line")
	}
}

// Install refuses what krew refuses: a wrong checksum, an archive entry
// outside the staging directory, a missing bin.
func TestKrewInstallRejects(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-deltas")
	license := filepath.Join(dir, "LICENSE")
	for _, f := range []string{bin, license} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	linux := OSArch{"linux", "amd64"}
	archive := func(t *testing.T, entries ...archiveEntry) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "a.tar.gz")
		if err := writeTarGz(path, entries, time.Now()); err != nil {
			t.Fatal(err)
		}
		return path
	}
	manifest := func(path, sum string) *Plugin {
		p := validManifest()
		p.Spec.Platforms[0].URI = "file://" + path
		p.Spec.Platforms[0].Sha256 = sum
		return p
	}
	good := archive(t, archiveEntry{"kubectl-deltas", bin, 0o755}, archiveEntry{"LICENSE", license, 0o644})
	sum, err := FileSha256(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Install(manifest(good, sum), linux, t.TempDir()); err != nil {
		t.Fatalf("a good archive does not install: %v", err)
	}

	tests := []struct {
		name string
		p    func(t *testing.T) *Plugin
		want string
	}{
		{"wrong sha256", func(*testing.T) *Plugin { return manifest(good, strings.Repeat("0", 64)) }, "sha256"},
		{"no such platform", func(*testing.T) *Plugin {
			p := manifest(good, sum)
			p.Spec.Platforms = p.Spec.Platforms[1:]
			return p
		}, "does not offer"},
		{"https uri", func(*testing.T) *Plugin { return validManifest() }, "file://"},
		{"path traversal", func(t *testing.T) *Plugin {
			a := archive(t, archiveEntry{"../evil", bin, 0o755})
			s, _ := FileSha256(a)
			return manifest(a, s)
		}, "unsafe"},
		{"bin missing", func(t *testing.T) *Plugin {
			a := archive(t, archiveEntry{"LICENSE", license, 0o644}, archiveEntry{"other", bin, 0o755})
			s, _ := FileSha256(a)
			p := manifest(a, s)
			p.Spec.Platforms[0].Files = nil
			return p
		}, "was not extracted"},
		{"bin not executable", func(t *testing.T) *Plugin {
			a := archive(t, archiveEntry{"kubectl-deltas", bin, 0o644}, archiveEntry{"LICENSE", license, 0o644})
			s, _ := FileSha256(a)
			return manifest(a, s)
		}, "not executable"},
		{"files from missing", func(*testing.T) *Plugin {
			p := manifest(good, sum)
			p.Spec.Platforms[0].Files = append(p.Spec.Platforms[0].Files, FileOperation{From: "README*", To: "."})
			return p
		}, "matches"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Install(tc.p(t), linux, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Install error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// krew installs exactly the binary, the LICENSE and kubectl's completion
// helper from each archive goreleaser makes.
func TestManifestFilesAreArchived(t *testing.T) {
	c := loadGoreleaser(t)
	p := loadManifest(t)
	for _, pa := range c.Targets() {
		contents, err := c.ArchiveContents(repoRoot, templateData(c, p.Spec.Version, pa))
		if err != nil {
			t.Fatal(err)
		}
		pl, err := PlatformFor(p, pa)
		if err != nil {
			t.Fatal(err)
		}
		var extracted []string
		for _, name := range contents {
			if filesProvide(pl.Files, name) {
				extracted = append(extracted, name)
			}
		}
		want := []string{"LICENSE", c.BinaryName(pa.OS), "kubectl_complete-deltas"}
		if pa.OS == "windows" {
			want[2] += ".cmd"
		}
		if !sameSet(extracted, want) {
			t.Errorf("%s: krew installs %v of the archive %v, want %v", pa, extracted, contents, want)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
