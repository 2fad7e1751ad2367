package httplog

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const canary = `s3cr"et <tok#en>`

// registry is a server speaking the registry token protocol: a challenge on /v2/, a token
// endpoint answering in JSON, an unknown one answering a form, a manifest, a blob, a redirect to a signed URL,
// a response that names a credential field on an ordinary path, and a Kubernetes Secret (apply's
// client goes through it too).
func registry(t *testing.T) *httptest.Server {
	manifest := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[` +
		strings.Repeat(`{"digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},`, 30) + `{}]}`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2/":
			w.Header().Set("Www-Authenticate", `Bearer realm="`+srv.URL+`/realm",service="reg"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/realm":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Set-Cookie", "session="+canary)
			_, _ = io.WriteString(w, `{"token":"`+canary+`","expires_in":300}`)
		case "/realm-form":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "access_token="+canary)
		case "/v2/a/manifests/v1":
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			_, _ = io.WriteString(w, manifest)
		case "/v2/a/manifests/error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","detail":"see https://mirror.example/m?sig=`+url.QueryEscape(canary)+`"}]}`)
		case "/api/v1/namespaces/a/secrets/s":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"kind":"Secret","apiVersion":"v1","data":{"k":"`+url.QueryEscape(canary)+`"}}`)
		case "/v2/a/manifests/odd":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"note":"x", "Password" : "`+canary+`"}`)
		case "/v2/a/blobs/sha256:00":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(bytes.Repeat([]byte{0x1f, 0x8b}, 100))
		case "/v2/a/blobs/sha256:01":
			http.Redirect(w, r, "https://bucket.example/b?X-Amz-Signature="+url.QueryEscape(canary), http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// run sends the requests a registry client sends, with credentials, through New at verbosity v
// and returns the log.
func run(t *testing.T, v int) string {
	srv := registry(t)
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.Level(-v)}))
	c := &http.Client{Transport: New(http.DefaultTransport, log), CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v2/", ""},
		{"GET", "/realm?scope=repository:a:pull", ""},
		{"GET", "/realm", ""},
		{"GET", "/realm-form", ""},
		{"POST", "/oauth2", "grant_type=password&password=" + url.QueryEscape(canary)},
		{"GET", "/v2/a/manifests/v1", ""},
		{"GET", "/v2/a/manifests/odd", ""},
		{"GET", "/api/v1/namespaces/a/secrets/s", ""},
		{"GET", "/v2/a/manifests/error", ""},
		{"GET", "/v2/a/blobs/sha256:00", ""},
		{"GET", "/v2/a/blobs/sha256:01?token=" + url.QueryEscape(canary), ""},
	} {
		req, err := http.NewRequestWithContext(context.Background(), r.method, srv.URL+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+canary)
		req.Header.Set("Cookie", "c="+canary)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return out.String()
}

// TestLevels: nothing below -v 6; -v 6 a line per request; -v 7 the headers; -v 8 the start
// of textual bodies, 1024 bytes (10240 at -v 9); at no level a credential: not in
// Authorization or Cookie headers, not in a query, not in a token endpoint's answer (JSON or
// a form, by challenge, scope or method), not in a redirect's body repeating its signed
// location, not in a body naming a credential field, not in a URL an error body quotes.
func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		v           int
		want, avoid []string
	}{
		{5, nil, []string{"GET"}},
		{6, []string{"GET http://127.0.0.1", "/v2/a/manifests/v1 200 OK in ", "/v2/ 401 Unauthorized in ", "token=xxxxx"},
			[]string{"Headers", "Body"}},
		{7, []string{"Request Headers:", "Authorization: Bearer xxxxx", "Cookie: xxxxx", "Response Status: 200 OK in ",
			"Set-Cookie: xxxxx", "X-Amz-Signature=xxxxx", `Www-Authenticate: Bearer realm=\"`},
			[]string{"Body"}},
		{8, []string{`Response Body: {\"schemaVersion\":2`, "[truncated, ", "the answer of a token exchange",
			"it names a credential field", "not shown (not text; application/octet-stream, 200 bytes)",
			"not shown (a redirect", `MANIFEST_UNKNOWN\",\"detail\":\"see https://mirror.example/m?sig=xxxxx`},
			nil},
		{9, []string{`Response Body: {\"schemaVersion\":2`}, []string{"[truncated, "}},
		{10, []string{`Response Body: {\"schemaVersion\":2`}, []string{"[truncated, "}},
	} {
		log := run(t, tc.v)
		for _, s := range []string{canary, `s3cr\"et`, "s3cr%22et", "tok#en"} {
			if strings.Contains(log, s) {
				t.Errorf("-v %d prints a credential (%q):\n%s", tc.v, s, log)
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(log, w) {
				t.Errorf("-v %d lacks %q:\n%s", tc.v, w, log)
			}
		}
		for _, a := range tc.avoid {
			if strings.Contains(log, a) {
				t.Errorf("-v %d prints %q:\n%s", tc.v, a, log)
			}
		}
		if tc.v == 8 {
			if n := strings.Count(log, "the answer of a token exchange"); n != 3 {
				t.Errorf("-v 8: %d token exchanges withheld, want 3 (the challenge's realm, a scope, a POST):\n%s", n, log)
			}
			if n := strings.Count(log, "it names a credential field"); n != 3 {
				t.Errorf("-v 8: %d bodies withheld for a credential field, want 3 (a form, a JSON field, a Secret):\n%s", n, log)
			}
		}
	}
}

// TestFailedRequest: a request that gets no response is logged with its error, redacted.
func TestFailedRequest(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: LevelURL}))
	c := &http.Client{Transport: New(http.DefaultTransport, log)}
	_, err := c.Get("http://127.0.0.1:1/v2/?token=" + url.QueryEscape(canary))
	if err == nil {
		t.Fatal("want an error")
	}
	if !strings.Contains(out.String(), "GET http://127.0.0.1:1/v2/?token=xxxxx failed after") || strings.Contains(out.String(), "s3cr") {
		t.Errorf("log:\n%s", out.String())
	}
}
