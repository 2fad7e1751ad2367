package testregistry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

func isTagList(req *http.Request) bool {
	return req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v2/") && strings.HasSuffix(req.URL.Path, "/tags/list")
}

// serveTagList implements distribution-spec tag pagination. ggcr's registry applies
// n/last but sends no Link header (so clients stop after one page) and returns the whole
// list again when last is the final tag; we ask it for the full list and page ourselves.
func serveTagList(inner http.Handler, w http.ResponseWriter, req *http.Request) {
	full := req.Clone(req.Context())
	full.URL = &url.URL{Path: req.URL.Path}
	full.RequestURI = ""
	rec := httptest.NewRecorder()
	inner.ServeHTTP(rec, full)
	if rec.Code != http.StatusOK {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	var list struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		http.Error(w, fmt.Sprintf("decoding tag list: %v", err), http.StatusInternalServerError)
		return
	}
	sort.Strings(list.Tags)
	q := req.URL.Query()
	if last := q.Get("last"); last != "" {
		i := sort.SearchStrings(list.Tags, last)
		if i < len(list.Tags) && list.Tags[i] == last {
			i++
		}
		list.Tags = list.Tags[i:]
	}
	if ns := q.Get("n"); ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"errors":[{"code":"PAGINATION_NUMBER_INVALID","message":%q}]}`, "n="+ns)
			return
		}
		if n < len(list.Tags) {
			list.Tags = list.Tags[:n]
			if n > 0 {
				next := url.Values{"n": {ns}, "last": {list.Tags[n-1]}}
				w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, req.URL.Path, next.Encode()))
			}
		}
	}
	if list.Tags == nil {
		list.Tags = []string{}
	}
	body, _ := json.Marshal(list)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
