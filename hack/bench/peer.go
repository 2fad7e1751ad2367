package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
	"github.com/lvms-rebase/lvms-rebase/rebase/payload"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// peerSpec tells the legacy-shaped pipeline what to fetch: the inputs the lvms-rebase run
// resolved, by digest, as mirrored references on the loopback registry.
type peerSpec struct {
	OCP           string        `json:"ocp"`
	Bundle        string        `json:"bundle"`
	BundleVersion string        `json:"bundleVersion"`
	Payloads      []peerPayload `json:"payloads"`
	RelatedImages []string      `json:"relatedImages"`
	SnapshotURL   string        `json:"snapshotURL"`
	Work          string        `json:"work"`
	Kubectl       string        `json:"kubectl,omitempty"`
}

type peerPayload struct {
	Arch string `json:"arch"`
	Ref  string `json:"ref"`
}

// peerResult is what the legacy-shaped pipeline reports back besides its wall time and RSS.
type peerResult struct {
	Phases        []PhaseTime `json:"phases"`
	ExportedBytes int64       `json:"exportedBytes"`
	Objects       int         `json:"objects"`
	Notes         []string    `json:"notes,omitempty"`
}

// peerMain is the legacy-shaped pipeline: the job done the way the legacy scripts do it
// (rebase_lvms.sh, rebase.sh; docs domain.md §6), one step after another.
//
//  1. per arch, `oc image extract --filter-by-os <arch>` of the bundle: a whole export of
//     the bundle image once per arch, then untar manifests/ and metadata/;
//  2. per arch, the whole payload image (every layer, as `oc adm release extract` reads
//     them), then untar release-manifests/;
//  3. per arch and relatedImage, `oc image info --filter-by-os`: the index, then the arch's
//     child manifest;
//  4. the whole snapshot-controller operator archive (the legacy rebase clones the repo);
//  5. translate the CSV and snapshot assets (no stock tool does this; our library is
//     used) and lay out the same kustomize tree;
//  6. `kubectl kustomize` of the era's two overlays.
func peerMain(args []string) error {
	fs := flag.NewFlagSet("bench peer", flag.ContinueOnError)
	specPath := fs.String("spec", "", "peer spec JSON written by the bench")
	resultPath := fs.String("result", "", "where to write the peer result JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *specPath == "" || *resultPath == "" {
		return errors.New("peer: -spec and -result are required")
	}
	data, err := os.ReadFile(*specPath)
	if err != nil {
		return err
	}
	var spec peerSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("peer spec %s: %w", *specPath, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runPeer(ctx, &spec)
	if err != nil {
		return err
	}
	return writeJSON(*resultPath, res)
}

func runPeer(ctx context.Context, spec *peerSpec) (*peerResult, error) {
	res := &peerResult{}
	phase := func(name string, f func() error) error {
		start := time.Now()
		err := f()
		res.Phases = append(res.Phases, PhaseTime{Name: name, Seconds: time.Since(start).Seconds()})
		if err != nil {
			return fmt.Errorf("legacy-shaped pipeline, %s: %w", name, err)
		}
		return nil
	}
	e, err := era.For(spec.OCP)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(spec.Work); err != nil {
		return nil, err
	}
	exportDir := filepath.Join(spec.Work, "export")
	if err := os.MkdirAll(exportDir, 0o755); err != nil {
		return nil, err
	}
	bundleDir := filepath.Join(spec.Work, "bundle")

	if err := phase("export bundle per arch", func() error {
		for _, p := range spec.Payloads {
			dir := bundleDir + "-" + p.Arch
			n, err := exportImage(ctx, spec.Bundle, filepath.Join(exportDir, "bundle-"+p.Arch+".tar"), dir, "manifests/", "metadata/")
			res.ExportedBytes += n
			if err != nil {
				return fmt.Errorf("bundle for %s: %w", p.Arch, err)
			}
		}
		// MicroShift's recipe copies from the amd64 extraction.
		return os.Rename(bundleDir+"-"+spec.Payloads[0].Arch, bundleDir)
	}); err != nil {
		return nil, err
	}

	var first *payload.Payload
	if err := phase("export payloads", func() error {
		for _, p := range spec.Payloads {
			dir := filepath.Join(spec.Work, "payload-"+p.Arch)
			n, err := exportImage(ctx, p.Ref, filepath.Join(exportDir, "payload-"+p.Arch+".tar"), dir, payload.Dir+"/")
			res.ExportedBytes += n
			if err != nil {
				return fmt.Errorf("payload %s: %w", p.Arch, err)
			}
			pl, err := payload.Load(filepath.Join(dir, payload.Dir))
			if err != nil {
				return fmt.Errorf("payload %s %s: %w", p.Arch, p.Ref, err)
			}
			if first == nil {
				first = pl
			}
		}
		if first == nil {
			return errors.New("the spec lists no payload")
		}
		return nil
	}); err != nil {
		return nil, err
	}

	if err := phase("relatedImage digests per arch", func() error {
		for _, p := range spec.Payloads {
			for _, ref := range spec.RelatedImages {
				if err := imageInfo(ctx, ref, p.Arch); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}

	var assets *snapshot.Assets
	if err := phase("snapshot archive", func() error {
		commit, err := first.SnapshotOperatorCommit()
		if err != nil {
			return err
		}
		url := strings.ReplaceAll(spec.SnapshotURL, snapshot.CommitPlaceholder, commit)
		tarball := filepath.Join(spec.Work, commit+".tar.gz")
		if err := download(ctx, url, tarball); err != nil {
			return err
		}
		assets, err = snapshot.Load(ctx, tarball, commit, nil)
		return err
	}); err != nil {
		return nil, err
	}

	staging := filepath.Join(spec.Work, "staging")
	if err := phase("translate and lay out", func() error {
		b, err := bundle.Load(bundleDir)
		if err != nil {
			return err
		}
		tr, err := bundle.Translate(b, e, bundle.Options{VersionTag: spec.BundleVersion})
		if err != nil {
			return err
		}
		sr, err := snapshot.Translate(assets, e)
		if err != nil {
			return err
		}
		return render.Stage(staging, lvmsrebase.Kustomize, tr.Objects, sr.Objects)
	}); err != nil {
		return nil, err
	}

	if spec.Kubectl == "" {
		res.Notes = append(res.Notes, "kubectl absent: kustomize step skipped")
		return res, nil
	}
	if err := phase("kubectl kustomize", func() error {
		for _, ov := range []string{e.LVMSOverlay, e.SnapshotOverlay} {
			if ov == "" {
				continue
			}
			var out, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, spec.Kubectl, "kustomize", filepath.Join(staging, filepath.FromSlash(ov)))
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("kubectl kustomize %s: %w: %s", ov, err, strings.TrimSpace(stderr.String()))
			}
			res.Objects += countDocs(out.String())
			if err := os.WriteFile(filepath.Join(spec.Work, strings.ReplaceAll(ov, "/", "_")+".yaml"), out.Bytes(), 0o644); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// imageInfo is `oc image info --filter-by-os linux/<arch> REF`: the index, then the
// arch's child manifest.
func imageInfo(ctx context.Context, ref, arch string) error {
	raw, err := crane.Manifest(ref, crane.Insecure, crane.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	goarch, err := source.GoArch(arch)
	if err != nil {
		return err
	}
	for _, d := range idx.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == goarch {
			repo, _, _ := strings.Cut(ref, "@")
			if _, err := crane.Manifest(repo+"@"+d.Digest.String(), crane.Insecure, crane.WithContext(ctx)); err != nil {
				return fmt.Errorf("%s (%s): %w", ref, arch, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%s: no linux/%s entry", ref, goarch)
}

// exportImage is `crane export REF TAR` followed by `tar -x` of the wanted prefixes
// into dir. It returns the size of the filesystem tar.
func exportImage(ctx context.Context, ref, tarPath, dir string, prefixes ...string) (int64, error) {
	img, err := crane.Pull(ref, crane.Insecure, crane.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", ref, err)
	}
	f, err := os.Create(tarPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := crane.Export(img, f); err != nil {
		return 0, fmt.Errorf("exporting %s to %s: %w", ref, tarPath, err)
	}
	n, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return n, err
	}
	// The filesystem tar holds every layer's files, the filler included, so the cap is
	// lifted: the point is to read it all.
	if _, err := extract.Tar(f, dir, extract.Options{Prefixes: prefixes, MaxImageSize: 1 << 40, Name: tarPath}); err != nil {
		return n, err
	}
	return n, nil
}

func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return f.Close()
}

// countDocs counts the YAML documents in kubectl kustomize output.
func countDocs(s string) int {
	n := 0
	for _, doc := range strings.Split("\n"+s, "\n---\n") {
		if strings.TrimSpace(doc) != "" {
			n++
		}
	}
	return n
}
