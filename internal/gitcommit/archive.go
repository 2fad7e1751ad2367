package gitcommit

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// topDirCommit is GitHub's archive top directory, "<repo>-<commit>/".
var topDirCommit = regexp.MustCompile(`-([0-9a-fA-F]{7,64})$`)

// Archive reads a (possibly gzip-compressed) tar archive to its end — so a truncated or
// corrupted download fails here, not later — and returns the commit it says it holds: the
// pax global header's comment (what `git archive` and GitHub write) or else the commit
// suffix of its single top directory. It returns "" when the archive names no commit.
// Reading stops with an error past max uncompressed bytes (a decompression bomb).
func Archive(r io.Reader, max int64) (string, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	lr := &io.LimitedReader{R: in, N: max + 1}
	tr := tar.NewReader(lr)
	var pax, top string
	entries := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if lr.N <= 0 {
			return "", fmt.Errorf("archive larger than %d bytes uncompressed", max)
		}
		if err != nil {
			return "", fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			if c := strings.TrimSpace(h.PAXRecords["comment"]); Valid(c) && pax == "" {
				pax = c
			}
			continue
		}
		entries++
		if first, _, _ := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/"); entries == 1 {
			top = first
		} else if first != top {
			top = ""
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			if lr.N <= 0 {
				return "", fmt.Errorf("archive larger than %d bytes uncompressed", max)
			}
			return "", fmt.Errorf("tar entry %s: %w", h.Name, err)
		}
	}
	// Read past the tar's end blocks to the gzip trailer, so its checksum is verified.
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	if entries == 0 {
		return "", errors.New("tar: no entries")
	}
	if pax != "" {
		return pax, nil
	}
	if m := topDirCommit.FindStringSubmatch(top); m != nil {
		return m[1], nil
	}
	return "", nil
}

// Same reports whether two commit ids name the same commit, allowing one to be an
// abbreviation (at least 7 digits) of the other.
func Same(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if len(a) < 7 || len(b) < 7 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}
