package cmdline

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseExtraInputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      []string
		want    map[string]any
		wantErr string
	}{
		{[]string{"ignore_eos:true", "temperature:0.5", "stop:\\n", "name:bob"}, map[string]any{"ignore_eos": true, "temperature": 0.5, "stop": "\\n", "name": "bob"}, ""},
		{[]string{`{"top_k": 5, "nested": {"a": [1]}}`}, map[string]any{"top_k": 5.0, "nested": map[string]any{"a": []any{1.0}}}, ""},
		{[]string{"url:http://x:1"}, map[string]any{"url": "http://x:1"}, ""},
		// AIPerf's forms: several items in one value, its True/None words.
		{[]string{"a:1,b:2"}, map[string]any{"a": 1.0, "b": 2.0}, ""},
		{[]string{`stop:["x","y"],max_tokens:5`}, map[string]any{"stop": []any{"x", "y"}, "max_tokens": 5.0}, ""},
		{[]string{"stop:x,y"}, map[string]any{"stop": "x,y"}, ""},
		{[]string{"ignore_eos:True", "seed:None"}, map[string]any{"ignore_eos": true, "seed": nil}, ""},
		{[]string{"novalue"}, nil, "want key:value"},
		{[]string{":1"}, nil, "want key:value"},
		{[]string{"{bad"}, nil, "not a JSON object"},
	}
	for _, tc := range cases {
		got, err := ParseExtraInputs(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--extra-inputs") {
				t.Errorf("ParseExtraInputs(%q) error %v, want %q naming the flag", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseExtraInputs(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseExtraInputs(%q) (-want +got)\n%s", tc.in, d)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	t.Parallel()
	got, err := ParseHeaders([]string{"X-Team: infra", "Authorization:Bearer sk-123"})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"X-Team": {"infra"}, "Authorization": {"Bearer sk-123"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// AIPerf's forms: several in one value, a JSON object; a value with
	// commas stays whole.
	got, err = ParseHeaders([]string{"A:1,B: 2", `{"X-Json": "j", "X-Num": 3}`, "Date: Mon, 01 Jan 2024 10:00:00 GMT"})
	if err != nil {
		t.Fatal(err)
	}
	want = http.Header{"A": {"1"}, "B": {"2"}, "X-Json": {"j"}, "X-Num": {"3"}, "Date": {"Mon, 01 Jan 2024 10:00:00 GMT"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"NoColon", "Bad Name: v", ": v", "X: a\r\nInjected: 1"} {
		_, err := ParseHeaders([]string{bad})
		if err == nil || !strings.Contains(err.Error(), "--header") {
			t.Errorf("ParseHeaders(%q) error %v, want one naming --header", bad, err)
		}
	}
	// A malformed secret header must not echo its value.
	_, err = ParseHeaders([]string{"Authorization Bearer sk-secret-value"})
	if err == nil || strings.Contains(err.Error(), "sk-secret-value") {
		t.Errorf("error %v leaks the value", err)
	}
}

func FuzzParseExtraInputs(f *testing.F) {
	for _, s := range []string{"ignore_eos:true", `{"a":1}`, "k:", ":", "a:b:c", `{"a":}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseExtraInputs([]string{s})
		if err == nil && m == nil {
			t.Fatal("nil map without an error")
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"X-A: b", "Authorization: Bearer k", "bad", "a:\r\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeaders([]string{s})
		if err != nil {
			return
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					t.Fatalf("header %q: %q carries a line break", k, v)
				}
			}
		}
	})
}

func TestRedactExtrasPerItem(t *testing.T) {
	t.Parallel()
	got := redactExtras([]string{"api_key:sk-123456,temperature:0", `{"secret_token": "abc", "top_k": 5}`})
	want := [][2]any{{"api_key", Redacted}, {"temperature", 0.0}, {"secret_token", Redacted}, {"top_k", 5.0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestNestedSecretsAreRedacted: a secret inside an --extra-inputs object
// or array is redacted in input_config and listed among the secrets the
// bodies and the command line are cleaned of, as the body spells it.
func TestNestedSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	items := []string{`{"options": {"auth": {"password": "pw-1234"}, "top_k": 5}, "tools": [{"api_key": "k-5678"}]}`, `meta:{"note":"q\"uote-secret","x_token":"t-\"9"}`}
	got := redactExtras(items)
	want := [][2]any{
		{"options", map[string]any{"auth": Redacted, "top_k": 5.0}},
		{"tools", []any{map[string]any{"api_key": Redacted}}},
		{"meta", map[string]any{"note": `q"uote-secret`, "x_token": Redacted}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("input_config (-want +got)\n%s", d)
	}
	secrets := (&Config{ExtraInputs: items}).SecretValues(http.Header{})
	for _, s := range []string{"pw-1234", "k-5678", `t-"9`, `t-\"9`} {
		if !slices.Contains(secrets, s) {
			t.Errorf("secrets %q lack %q", secrets, s)
		}
	}
	if slices.Contains(secrets, `q"uote-secret`) {
		t.Errorf("secrets %q hold a value under no secret key", secrets)
	}
}

func TestIsSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"api_key": true, "apiKey": true, "X-Api-Key": true, "authorization": true, "x-auth-token": true,
		"password": true, "db_passwd": true, "client_secret": true, "sig": true, "X-Amz-Signature": true,
		"access_token": true, "authToken": true, "Cookie": true, "credentials": true,
		"max_tokens": false, "max_completion_tokens": false, "temperature": false, "top_k": false,
		"ignore_eos": false, "api-version": false, "model": false, "stream": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"http://localhost:8000/v1":      "http://localhost:8000/v1",
		"localhost:8000":                "localhost:8000",
		"mock":                          "mock",
		"http://user:PASS@host:8000/v1": "http://<redacted>@host:8000/v1",
		"user:PASS@host:8000":           "<redacted>@host:8000",
		"https://TOKEN@host/v1":         "https://<redacted>@host/v1",
		"http://host/v1?api_key=Q&api-version=2024-02-01": "http://host/v1?api-version=2024-02-01&api_key=<redacted>",
		"http://host/v1?api-version=2024-02-01&x=1":       "http://host/v1?api-version=2024-02-01&x=1",
		"http://host/v1?sig=S&token=T&a=1":                "http://host/v1?a=1&sig=<redacted>&token=<redacted>",
	} {
		got := RedactURL(raw)
		if got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
		for _, secret := range []string{"PASS", "TOKEN", "=Q", "=S", "=T"} {
			if strings.Contains(got, secret) {
				t.Errorf("RedactURL(%q) = %q keeps %q", raw, got, secret)
			}
		}
	}
}

func TestSecretValues(t *testing.T) {
	t.Parallel()
	c := Config{APIKey: "sk-1", ExtraInputs: []string{"password:pw-2", "temperature:0.5", `{"client_secret": "cs-3"}`},
		URLs: []string{"http://u:url-4@a:1/v1?api_key=q-5&n=6", "TOK-7@b:2"}}
	h := http.Header{"Authorization": {"Bearer sk-1"}, "X-Custom-Token": {"ct-8"}, "Accept": {"text/plain"}}
	got := c.SecretValues(h)
	for _, want := range []string{"sk-1", "Bearer sk-1", "pw-2", "cs-3", "url-4", "q-5", "TOK-7", "ct-8"} {
		if !slices.Contains(got, want) {
			t.Errorf("SecretValues lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"0.5", "6", "text/plain", "u", ""} {
		if slices.Contains(got, not) {
			t.Errorf("SecretValues holds %q, no secret: %q", not, got)
		}
	}
}
