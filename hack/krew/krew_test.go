package krew

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// The repository's files, relative to this package.
const (
	manifestPath   = "../../plugin.yaml"
	templatePath   = "../../.krew.yaml"
	goreleaserPath = "../../.goreleaser.yaml"
	repoRoot       = "../.."
	pluginName     = "deltas"
	// The tools module pinning krew, and where the Makefile installs it.
	toolsGoMod = "../tools/go.mod"
	toolsBin   = "../tools/bin"
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

// krewTools returns krew's tools as "make validate-krew-manifest" installs
// them (the version pinned in hack/tools/go.mod) and names them in
// DELTAS_VALIDATE_KREW_MANIFEST and DELTAS_KREW. Without those variables
// it uses the ones an earlier make installed into hack/tools/bin, and
// skips the test if there are none.
func krewTools(t *testing.T) Tools {
	t.Helper()
	tl := Tools{Validator: os.Getenv("DELTAS_VALIDATE_KREW_MANIFEST"), Krew: os.Getenv("DELTAS_KREW")}
	if tl.Validator == "" || tl.Krew == "" {
		tl = installedKrewTools(t)
	}
	for _, bin := range []string{tl.Validator, tl.Krew} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("krew tool missing: %v (make validate-krew-manifest installs it)", err)
		}
	}
	return tl
}

// installedKrewTools finds the tools the Makefile installs into
// hack/tools/bin, named with the krew version of hack/tools/go.mod, or
// skips the test.
func installedKrewTools(t *testing.T) Tools {
	t.Helper()
	const skip = "needs krew's validate-krew-manifest and krew: run make validate-krew-manifest"
	mod, err := os.ReadFile(toolsGoMod)
	if err != nil {
		t.Skipf("%s (%v)", skip, err)
	}
	version := ""
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "sigs.k8s.io/krew" {
			version = f[1]
		}
	}
	tl := Tools{
		Validator: filepath.Join(toolsBin, "validate-krew-manifest-"+version),
		Krew:      filepath.Join(toolsBin, "krew-"+version),
	}
	for _, bin := range []string{tl.Validator, tl.Krew} {
		if _, err := os.Stat(bin); version == "" || err != nil {
			t.Skip(skip)
		}
	}
	return tl
}

// plugin.yaml passes krew's own validation, as krew-index's CI runs it.
func TestManifestValid(t *testing.T) {
	tl := krewTools(t)
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tl.Validate(data, pluginName)
	if err != nil {
		t.Fatalf("plugin.yaml is not a valid krew manifest: %v", err)
	}
	// The validator logs each check it passed: it did run them.
	for _, want := range []string{"structural validation OK", "no overlapping spec.platform[].selector"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate-krew-manifest printed:\n%s\nwant a line with %q", out, want)
		}
	}
	if p := loadManifest(t); slices.ContainsFunc(p.Spec.Platforms, func(pl Platform) bool { return pl.Sha256 == PlaceholderSha256 }) {
		t.Logf("plugin.yaml has placeholder checksums: %s is not released yet", p.Spec.Version)
	}
}

// The validator's verdict reaches the tests: manifests krew rejects fail.
func TestManifestValidatorRejects(t *testing.T) {
	tl := krewTools(t)
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"other name", "\n  name: deltas\n", "\n  name: deltaz\n", `plugin should be named "deltas"`},
		{"bad sha256", "sha256: " + PlaceholderSha256, "sha256: abc", "`sha256` value abc is not valid"},
		{"overlapping selectors", "os: darwin\n        arch: amd64", "os: linux\n        arch: amd64", "overlapping selectors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("plugin.yaml has no %q to change", tc.old)
			}
			bad := bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1)
			out, err := tl.Validate(bad, pluginName)
			if err == nil {
				t.Fatalf("validate-krew-manifest accepted the manifest with %q:\n%s", tc.new, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("validate-krew-manifest printed:\n%s\nwant %q", out, tc.want)
			}
		})
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
			// The README and the docs/ pages it links to.
			pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
			if err != nil || len(pages) == 0 {
				t.Fatalf("no docs/*.md pages: %v", err)
			}
			wantFiles := []string{"LICENSE", "README.md"}
			for _, p := range pages {
				wantFiles = append(wantFiles, "docs/"+filepath.Base(p))
			}
			for _, want := range wantFiles {
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

// TestKrewInstallFromLocalArchive builds the host's archive as goreleaser
// would, installs it with krew from a copy of plugin.yaml that carries the
// archive's real sha256 ("krew install --manifest --archive"), into a
// fresh KREW_ROOT, and runs the installed plugin.
func TestKrewInstallFromLocalArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	tl := krewTools(t)
	p := loadManifest(t)
	c := loadGoreleaser(t)
	host := OSArch{runtime.GOOS, runtime.GOARCH}
	archive, err := c.BuildArchive(repoRoot, t.TempDir(), templateData(c, p.Spec.Version, host))
	if err != nil {
		t.Fatal(err)
	}
	if pl, err := PlatformFor(p, host); err != nil {
		t.Fatal(err)
	} else if ArchiveName(pl) != filepath.Base(archive) {
		t.Fatalf("the manifest downloads %s, the build made %s", ArchiveName(pl), filepath.Base(archive))
	}
	installAndRun(t, tl, p, c, host, archive, "", p.Spec.Version)
}

// Every platform's archive, laid out as goreleaser lays it out (with a
// stand-in executable), installs with krew (KREW_OS, KREW_ARCH), and krew
// installs exactly the binary, the LICENSE and kubectl's completion helper.
func TestKrewInstallsEveryPlatform(t *testing.T) {
	tl := krewTools(t)
	p := loadManifest(t)
	c := loadGoreleaser(t)
	stub := filepath.Join(t.TempDir(), "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, pa := range c.Targets() {
		t.Run(pa.String(), func(t *testing.T) {
			archive, err := c.PackArchive(repoRoot, t.TempDir(), templateData(c, p.Spec.Version, pa), stub)
			if err != nil {
				t.Fatal(err)
			}
			installAndRun(t, tl, p, c, pa, archive, "", "")
		})
	}
}

// krew refuses an archive whose sha256 is not the manifest's, and the
// tests see the refusal.
func TestKrewInstallRejectsWrongChecksum(t *testing.T) {
	tl := krewTools(t)
	p := loadManifest(t)
	c := loadGoreleaser(t)
	host := OSArch{runtime.GOOS, runtime.GOARCH}
	stub := filepath.Join(t.TempDir(), "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive, err := c.PackArchive(repoRoot, t.TempDir(), templateData(c, p.Spec.Version, host), stub)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := ForArchive(p, host, strings.Repeat("0", 64))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tl.Install(manifest, archive, host, t.TempDir())
	if err == nil || !strings.Contains(out, "checksum does not match") {
		t.Errorf("krew install of an archive with another sha256: %v\n%s\nwant a checksum error", err, out)
	}
}

// installAndRun installs p for pa from archive with krew into a fresh
// KREW_ROOT (sum: the archive's sha256, "" to compute it), checks that
// krew installed exactly the binary, the LICENSE and kubectl's completion
// helper and put kubectl-deltas on its PATH directory, and, if wantVersion
// is set, runs "kubectl-deltas version --client" and checks that the
// version starts with wantVersion.
func installAndRun(t *testing.T, tl Tools, p *Plugin, c *GoreleaserConfig, pa OSArch, archive, sum, wantVersion string) {
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
	manifest, err := ForArchive(p, pa, sum)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if _, err := tl.Install(manifest, archive, pa, root); err != nil {
		t.Fatal(err)
	}

	installed := dirNames(t, filepath.Join(root, "store", p.Metadata.Name, p.Spec.Version))
	want := []string{"LICENSE", c.BinaryName(pa.OS), "kubectl_complete-deltas"}
	if pa.OS == "windows" {
		want[2] += ".cmd"
	}
	slices.Sort(want)
	if !slices.Equal(installed, want) {
		t.Errorf("krew installed %v, want %v", installed, want)
	}
	link := "kubectl-deltas"
	if pa.OS == "windows" {
		link += ".exe"
	}
	if got := dirNames(t, filepath.Join(root, "bin")); !slices.Equal(got, []string{link}) {
		t.Errorf("krew put %v on PATH, want [%s] (what \"kubectl deltas\" runs)", got, link)
	}
	if wantVersion == "" {
		return
	}

	bin := filepath.Join(root, "bin", link)
	out, err := exec.Command(bin, "version", "--client").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl-deltas version --client: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Client Version: "+wantVersion) {
		t.Errorf("version --client printed:\n%s\nwant \"Client Version: %s…\"", out, wantVersion)
	}
	out, err = exec.Command(bin, "version", "--client", "-o", "json").Output()
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

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
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
