package testregistry

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// endlessPageSize is how many tags one FaultEndlessPages page carries.
const endlessPageSize = 100

// defaultFaultSize is Fault.Size's default.
const defaultFaultSize = 1 << 20

// hostile answers the faults that model a registry which misbehaves without failing:
// pagination that never ends, tag lists without bounds, manifests that are not what their
// digest says.
func (r *Registry) hostile(w http.ResponseWriter, req *http.Request, f *Fault, next http.Handler) {
	size := f.Size
	if size <= 0 {
		size = defaultFaultSize
	}
	switch f.Kind {
	case FaultSelfLink:
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, req)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, req.URL.RequestURI()))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	case FaultEndlessPages:
		endlessPage(w, req)
	case FaultHugeTagList:
		hugeTagList(w, req, size)
	case FaultWrongDigest:
		wrongDigest(w, req, size)
	case FaultHugeBody:
		hugeBody(w, size)
	}
}

// hugeBody streams size zero bytes under their Content-Length, until the client stops reading.
func hugeBody(w http.ResponseWriter, size int64) {
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	chunk := make([]byte, 64<<10)
	for sent := int64(0); sent < size; sent += int64(len(chunk)) {
		n := min(int64(len(chunk)), size-sent)
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
	}
}

// endlessPage serves page k+1 of an endless tag list, k being the page its "last" names.
func endlessPage(w http.ResponseWriter, req *http.Request) {
	k := 0
	if last := req.URL.Query().Get("last"); last != "" {
		if _, err := fmt.Sscanf(last, "endless-%08d", &k); err != nil {
			http.Error(w, "last is not a tag of this list", http.StatusBadRequest)
			return
		}
		k++
	}
	tags := make([]string, endlessPageSize)
	for i := range tags {
		tags[i] = strconv.Quote(fmt.Sprintf("endless-%08d-%03d", k, i))
	}
	tags[len(tags)-1] = strconv.Quote(fmt.Sprintf("endless-%08d", k))
	next := url.Values{"n": {strconv.Itoa(endlessPageSize)}, "last": {fmt.Sprintf("endless-%08d", k)}}
	w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, req.URL.Path, next.Encode()))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"name":%q,"tags":[%s]}`, repoOf(req.URL.Path, "/tags/list"), strings.Join(tags, ","))
}

// hugeTagList streams one page of about size bytes of tags, so the registry does not hold
// what it sends.
func hugeTagList(w http.ResponseWriter, req *http.Request, size int64) {
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 64<<10)
	n, _ := fmt.Fprintf(bw, `{"name":%q,"tags":[`, repoOf(req.URL.Path, "/tags/list"))
	written := int64(n)
	for i := 0; written < size; i++ {
		m, err := fmt.Fprintf(bw, `"huge-%012d",`, i)
		if err != nil {
			return // the client gave up
		}
		written += int64(m)
	}
	_, _ = bw.WriteString(`"huge-end"]}`)
	_ = bw.Flush()
}

// wrongDigest answers a manifest request by digest with a valid OCI image manifest padded
// to about size bytes, claiming the requested digest.
func wrongDigest(w http.ResponseWriter, req *http.Request, size int64) {
	_, digest, ok := strings.Cut(req.URL.Path, "/manifests/")
	if !ok || !strings.HasPrefix(digest, "sha256:") {
		http.Error(w, "FaultWrongDigest needs a manifest request by digest", http.StatusBadRequest)
		return
	}
	head := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:` +
		strings.Repeat("0", 64) + `","size":2},"layers":[],"annotations":{"padding":"`
	tail := `"}}`
	pad := max(size-int64(len(head)+len(tail)), 1)
	w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	w.Header().Set("Docker-Content-Digest", digest)
	w.Header().Set("Content-Length", strconv.FormatInt(int64(len(head)+len(tail))+pad, 10))
	if req.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.WriteString(head)
	chunk := strings.Repeat("x", 64<<10)
	for left := pad; left > 0; left -= int64(len(chunk)) {
		if _, err := bw.WriteString(chunk[:min(left, int64(len(chunk)))]); err != nil {
			return
		}
	}
	_, _ = bw.WriteString(tail)
	_ = bw.Flush()
}

// repoOf is the repository name in a /v2/<name>/<suffix>… path.
func repoOf(path, suffix string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(path, "/v2/"), suffix)
	return name
}
