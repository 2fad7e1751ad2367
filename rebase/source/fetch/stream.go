package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lvms-rebase/lvms-rebase/rebase/extract"
)

// A payload's top layer is extracted while it downloads: the bytes the cache stores and
// verifies are also fed, through a pipe, to an extraction running alongside, so its files are
// written when the last byte arrives instead of in a second pass over the cached blob (and
// Request.OnFile hears of image-references as soon as it has streamed in, long before the
// layer is complete). Nothing the stream wrote counts until the blob has verified: Extract
// returns only then. Only the first download attempt is fed; when it fails (a retry would feed
// the extraction a second, partial copy) or the blob came from the cache, the stream is cut and
// Extract extracts the verified blob from the cache as it always did.

// errNotStreamed ends a stream that was never fed: the blob came from the cache.
var errNotStreamed = errors.New("the layer was not downloaded (it was cached)")

// stream is one blob's first download attempt on its way to an extraction.
type stream struct {
	digest v1.Hash // the blob fed; set once the image manifest names it
	// mediaType is the type the manifest declares for it, ref the image, for checkLayer.
	mediaType types.MediaType
	ref       string
	pr        *io.PipeReader
	pw        *io.PipeWriter

	mu       sync.Mutex
	fed      bool // an attempt has been handed to feed
	complete bool // that attempt stored and verified the whole blob
	closed   bool
}

func newStream() *stream {
	pr, pw := io.Pipe()
	return &stream{pr: pr, pw: pw}
}

// of returns s when it feeds the blob h, else nil (so callers can pass it to any blob).
func (s *stream) of(h v1.Hash) *stream {
	if s == nil || s.digest != h {
		return nil
	}
	return s
}

// feed returns the body an attempt stores: the first attempt's copied into the pipe, any
// later one as it is.
func (s *stream) feed(body io.Reader) io.Reader {
	if s == nil {
		return body
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fed || s.closed {
		return body
	}
	s.fed = true
	return io.TeeReader(body, pipeFeeder{s.pw})
}

// end closes the stream after the attempt that fed it: at EOF when the blob stored and
// verified, with the attempt's error otherwise.
func (s *stream) end(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fed || s.closed {
		return
	}
	s.closed = true
	if err != nil {
		s.pw.CloseWithError(err)
		return
	}
	s.complete = true
	s.pw.Close()
}

// close ends a stream nothing fed (the blob was cached, or the fetch failed before it).
func (s *stream) close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.pw.CloseWithError(err)
	}
}

// verified reports whether the extraction read exactly the bytes of the verified blob.
func (s *stream) verified() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.complete
}

// layer is the stream as an extraction layer: the pipe, decompressed as the media type (or
// the first bytes) says. Closing it drains the pipe, so the download never waits for an
// extraction that has stopped reading.
func (s *stream) layer(name string) extract.Layer {
	return extract.Layer{Name: name, Open: func() (io.ReadCloser, error) {
		br := bufio.NewReader(s.pr)
		head, _ := br.Peek(4)
		if err := checkLayer(s.ref, v1.Descriptor{Digest: s.digest, MediaType: s.mediaType}, head); err != nil {
			s.drain()
			return nil, err
		}
		l, err := partial.CompressedToLayer(&pipeLayer{s: s, r: br})
		if err != nil {
			return nil, err
		}
		return l.Uncompressed()
	}}
}

// pipeFeeder writes into the pipe and never fails the download: once the extraction has
// stopped reading (the pipe's reader is closed), the rest of the body is only stored.
type pipeFeeder struct{ pw *io.PipeWriter }

func (f pipeFeeder) Write(p []byte) (int, error) {
	_, _ = f.pw.Write(p)
	return len(p), nil
}

// pipeLayer adapts the pipe (read through r, which peeked at its first bytes) to ggcr, which
// picks gzip, zstd or plain from the first bytes; checkLayer has held them to the declared type.
type pipeLayer struct {
	s *stream
	r io.Reader
}

func (p *pipeLayer) Digest() (v1.Hash, error)            { return p.s.digest, nil }
func (p *pipeLayer) Size() (int64, error)                { return -1, nil }
func (p *pipeLayer) MediaType() (types.MediaType, error) { return types.DockerLayer, nil }
func (p *pipeLayer) Compressed() (io.ReadCloser, error)  { return drainCloser{p.s, p.r}, nil }

// drainCloser reads the pipe through r; Close reads what is left and then closes it.
type drainCloser struct {
	s *stream
	r io.Reader
}

func (d drainCloser) Read(b []byte) (int, error) { return d.r.Read(b) }

func (d drainCloser) Close() error {
	d.s.drain()
	return nil
}

// drain reads what is left in the pipe and closes it: the extraction's last act, so a feed
// never waits for a reader that has gone.
func (s *stream) drain() {
	_, _ = io.Copy(io.Discard, s.pr)
	_ = s.pr.Close()
}

// streamed is the extraction of a top layer running alongside its download.
type streamed struct {
	s     *stream
	ended chan struct{}
	res   *extract.Result
	err   error
}

// startStream starts extracting req's top layer into dir from the download that is going to
// feed it. It returns nil when nothing would be downloaded (an OCI layout, offline) or when
// req names no prefixes (what a cut stream wrote could not be told from the rest of dir).
func (c *Client) startStream(req Request, m *manifest, dir string) *streamed {
	if m.layout != nil || c.opts.Offline || len(req.Prefixes) == 0 {
		return nil
	}
	x := &streamed{s: newStream(), ended: make(chan struct{})}
	go func() {
		defer close(x.ended)
		defer x.s.drain()
		top := []extract.Layer{x.s.layer("top layer (streamed)")}
		x.res, _, x.err = extract.TopDown(top, dir, c.extractOptions(req), nil)
	}()
	return x
}

// feeding is the stream the fetch feeds (nil for no stream).
func (x *streamed) feeding() *stream {
	if x == nil {
		return nil
	}
	return x.s
}

// wait ends a stream the fetch never fed and waits for the extraction; it returns err, how
// the fetch ended.
func (x *streamed) wait(err error) error {
	if x == nil {
		return err
	}
	x.s.close(errNotStreamed)
	<-x.ended
	return err
}

// extracted reports whether the stream extracted every wanted file from the whole verified blob.
func (x *streamed) extracted(req Request) bool {
	return x != nil && x.s.verified() && x.err == nil && wantDone(req, x.res.Files)
}

// discard removes what a stream that is not used wrote (a cut stream's bytes were never
// verified), before the extraction from the cache writes the same directories.
func (x *streamed) discard(req Request, dir string) error {
	if x == nil {
		return nil
	}
	for _, p := range req.Prefixes {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p == "" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return fmt.Errorf("clearing %s before extracting %s %s again: %w", filepath.Join(dir, p), req.Kind, req.Ref, err)
		}
	}
	return nil
}
