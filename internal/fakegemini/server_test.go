package fakegemini

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServer: a streamed reply is one SSE event holding the text and the
// call, a plain one the same object; an error status carries a Google API
// error; the request is recorded with its key, and its last content read.
func TestServer(t *testing.T) {
	srv, err := Start(func(r Request) Reply {
		if r.HasFunctionResponse() {
			return Reply{Status: 503, ErrorMessage: "down"}
		}
		return Reply{Text: "Writing.", Calls: []Call{{Name: "write_file", Args: map[string]string{"file_path": "a"}}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(method, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/models/m:"+method, strings.NewReader(body))
		req.Header.Set("x-goog-api-key", "k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post("streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"go"}]}]}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "data: ") || !strings.Contains(body, `"functionCall"`) || !strings.Contains(body, "Writing.") {
		t.Fatalf("stream: %d %q", resp.StatusCode, body)
	}
	resp, body = post("generateContent", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"write_file"}}]}]}`)
	var e struct {
		Error struct {
			Code   int    `json:"code"`
			Status string `json:"status"`
		} `json:"error"`
	}
	if resp.StatusCode != 503 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != 503 || e.Error.Status != "UNAVAILABLE" {
		t.Fatalf("error: %d %q", resp.StatusCode, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].APIKey != "k" || reqs[0].LastText() != "go" || !reqs[1].HasFunctionResponse() {
		t.Fatalf("requests = %+v", reqs)
	}
}
