// Command render-manifest renders the krew-release-bot template .krew.yaml
// for a release tag into plugin.yaml, the way the bot renders it for
// krew-index ("make krew-manifest").
//
//	render-manifest -tag v0.1.0 -checksums checksums.txt   # after the release
//	render-manifest -tag v0.2.0 -placeholder                # before it
//	render-manifest                                         # re-render, same tag and checksums
//
// The checksum of each archive comes from -checksums (goreleaser's
// checksums.txt), else from the current plugin.yaml for the same uri, else,
// with -placeholder, is a placeholder (PlaceholderSha256). With
// -validate-krew-manifest, krew's validator must accept the result before
// it is written ("make krew-manifest" passes the pinned one).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/kubectl-deltas/kubectl-deltas/hack/krew"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		templatePath  = flag.String("template", ".krew.yaml", "the krew-release-bot template")
		manifestPath  = flag.String("o", "plugin.yaml", "the manifest to write")
		tag           = flag.String("tag", "", "the release tag (default: the version of the current manifest)")
		checksumsPath = flag.String("checksums", "", "a checksums.txt with the sha256 of the release archives")
		placeholder   = flag.Bool("placeholder", false, "use placeholder checksums for archives without one (an unreleased version)")
		validator     = flag.String("validate-krew-manifest", "", "krew's validate-krew-manifest, run on the result before it is written")
	)
	flag.Parse()

	current, err := krew.Load(*manifestPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	known := map[string]string{}
	if current != nil {
		for _, pl := range current.Spec.Platforms {
			known[pl.URI] = pl.Sha256
		}
		if *tag == "" {
			*tag = current.Spec.Version
		}
	}
	if *tag == "" {
		return errors.New("no -tag given and no current manifest to take it from")
	}
	var sums map[string]string
	if *checksumsPath != "" {
		f, err := os.Open(*checksumsPath)
		if err != nil {
			return err
		}
		sums, err = krew.Checksums(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	usedPlaceholder := false
	sha := func(uri string) (string, error) {
		if s, ok := krew.ChecksumFor(sums, uri); ok {
			return s, nil
		}
		if s, ok := known[uri]; ok {
			usedPlaceholder = usedPlaceholder || s == krew.PlaceholderSha256
			return s, nil
		}
		if *placeholder {
			usedPlaceholder = true
			return krew.PlaceholderSha256, nil
		}
		return "", fmt.Errorf("no sha256 for %s: pass -checksums with the release's checksums.txt, or -placeholder", uri)
	}

	tmpl, err := os.ReadFile(*templatePath)
	if err != nil {
		return err
	}
	out, err := krew.Render(tmpl, *tag, sha)
	if err != nil {
		return err
	}
	if _, err := krew.Parse(out); err != nil {
		return err
	}
	if *validator != "" {
		if _, err := (krew.Tools{Validator: *validator}).Validate(out, "deltas"); err != nil {
			return fmt.Errorf("the rendered manifest is invalid, fix .krew.yaml: %w", err)
		}
	}
	return os.WriteFile(*manifestPath, append([]byte(krew.ManifestHeader(usedPlaceholder)), out...), 0o644)
}
