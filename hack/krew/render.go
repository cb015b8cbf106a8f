package krew

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"text/template"
)

// PlaceholderSha256 stands for the checksum of an archive that is not
// released yet: valid for krew's format check and obviously not real. (Not
// all zeros: unquoted, as the bot writes it, YAML would read a number.)
const PlaceholderSha256 = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef"

// Sha256Func returns the sha256 of the archive at uri.
type Sha256Func func(uri string) (string, error)

// Render executes the krew-release-bot template tmpl for the release tag,
// as the bot does: the data has TagName, and addURIAndSha(url, tag)
// renders url for the tag and returns "uri: URL\n    sha256: SUM" (the
// bot writes the sha256 line at four spaces), with SUM from sha256For
// instead of a download. indent is the bot's too.
func Render(tmpl []byte, tag string, sha256For Sha256Func) ([]byte, error) {
	funcs := template.FuncMap{
		"indent": func(spaces int, v string) string {
			v = strings.ReplaceAll(v, "    sha256:", "sha256:")
			pad := strings.Repeat(" ", spaces)
			return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
		},
		"addURIAndSha": func(rawURL, tag string) (string, error) {
			t, err := template.New("url").Parse(rawURL)
			if err != nil {
				return "", err
			}
			var uri bytes.Buffer
			data := struct{ TagName, Version string }{TagName: tag, Version: versionFromTag(tag)}
			if err := t.Execute(&uri, data); err != nil {
				return "", err
			}
			sum, err := sha256For(uri.String())
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
		},
	}
	t, err := template.New(".krew.yaml").Funcs(funcs).Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("parsing the krew template: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, struct{ TagName string }{TagName: tag}); err != nil {
		return nil, fmt.Errorf("rendering the krew template for %s: %w", tag, err)
	}
	return out.Bytes(), nil
}

// versionFromTag is the bot's .Version of a URL: the dotted digits of the
// tag.
func versionFromTag(tag string) string {
	if v := regexp.MustCompile(`\d+(\.\d+)+`).FindString(tag); v != "" {
		return v
	}
	return tag
}

// isSha256Hex tells whether s is a sha256 in lower-case hexadecimal, as
// checksums.txt and krew manifests write it.
func isSha256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if ('0' > c || c > '9') && ('a' > c || c > 'f') {
			return false
		}
	}
	return true
}

// ManifestHeader is the comment at the top of plugin.yaml.
func ManifestHeader(placeholder bool) string {
	h := `# krew plugin manifest of kubectl deltas, rendered from the krew-release-bot
# template .krew.yaml by "make krew-manifest": edit .krew.yaml, not this file.
`
	if placeholder {
		h += `# The checksums are placeholders until this version is released; after the
# release, run: make krew-manifest TAG=<tag> CHECKSUMS=<the release's checksums.txt>
`
	}
	return h
}

// Checksums reads a sha256sum-style list ("SUM  NAME" per line), such as
// goreleaser's checksums.txt, into a map from file name to sum.
func Checksums(r io.Reader) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 || !isSha256Hex(fields[0]) {
			return nil, fmt.Errorf("invalid checksums line %q: want \"SHA256  NAME\"", sc.Text())
		}
		sums[path.Base(strings.TrimPrefix(fields[1], "*"))] = fields[0]
	}
	return sums, sc.Err()
}

// ChecksumFor finds the sum of the archive at uri in sums: by its file
// name, or else by its platform suffix ("_linux_amd64.tar.gz"), so that the
// checksums of a snapshot, whose names carry another version, also do.
func ChecksumFor(sums map[string]string, uri string) (string, bool) {
	name := path.Base(uri)
	if s, ok := sums[name]; ok {
		return s, true
	}
	suffix := platformSuffix(name)
	if suffix == "" {
		return "", false
	}
	found := ""
	for n, s := range sums {
		if strings.HasSuffix(n, suffix) {
			if found != "" {
				return "", false // ambiguous
			}
			found = s
		}
	}
	return found, found != ""
}

// platformSuffix is "_os_arch.ext" of an archive name "x_v1_os_arch.ext".
func platformSuffix(name string) string {
	ext := ""
	for _, e := range []string{".tar.gz", ".zip"} {
		if strings.HasSuffix(name, e) {
			ext = e
		}
	}
	parts := strings.Split(strings.TrimSuffix(name, ext), "_")
	if ext == "" || len(parts) < 3 {
		return ""
	}
	return "_" + strings.Join(parts[len(parts)-2:], "_") + ext
}
