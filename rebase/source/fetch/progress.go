package fetch

import (
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Progress describes a blob download under way.
type Progress struct {
	// Image is the canonical reference the blob belongs to.
	Image string
	// Digest is the blob digest.
	Digest string
	// Done is the number of bytes received so far; Total the expected size (0 if unknown).
	Done, Total int64
	// Finished is set on the last report of a blob.
	Finished bool
}

const (
	// ProgressMinBytes is the smallest blob that reports progress: small blobs finish
	// before a report would be useful.
	ProgressMinBytes = 1 << 20
	// ProgressInterval is the least time between two reports of one blob.
	ProgressInterval = 250 * time.Millisecond
)

// progressReader wraps a blob body so that Options.Progress hears about long downloads.
func (c *Client) progressReader(r io.Reader, image string, h v1.Hash, size int64) io.Reader {
	if c.opts.Progress == nil || size < ProgressMinBytes {
		return r
	}
	return &progressReader{r: r, report: c.opts.Progress, p: Progress{Image: image, Digest: h.String(), Total: size}}
}

type progressReader struct {
	r      io.Reader
	report func(Progress)
	p      Progress
	last   time.Time
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.Done += int64(n)
	if err == io.EOF {
		pr.p.Finished = true
		pr.report(pr.p)
		return n, err
	}
	if now := time.Now(); now.Sub(pr.last) >= ProgressInterval {
		pr.last = now
		pr.report(pr.p)
	}
	return n, err
}
