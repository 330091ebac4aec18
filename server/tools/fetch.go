package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// fetchURL is fetch_url.
type fetchURL struct {
	client *http.Client
	max    int64
}

type fetchArgs struct {
	URL string `json:"url"`
}

func (a *fetchArgs) check() error { return required(NameFetchURL, "url", a.URL) }

func (fetchURL) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	return decoded[fetchArgs](NameFetchURL, raw)
}

func (fetchURL) NeedsApprovalByDefault() bool { return true }

func (t fetchURL) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name: NameFetchURL,
		Description: fmt.Sprintf("Fetch a web page or API response with an HTTP GET and return its status, content type and body as text. "+
			"Only http and https URLs, and only text content (HTML, JSON, XML, plain text and the like); "+
			"bodies larger than %d bytes are cut, with a note saying so.", t.max),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "url": {
      "type": "string",
      "description": "The absolute http or https URL to fetch, such as \"https://example.com/page\"."
    }
  },
  "required": ["url"],
  "additionalProperties": false
}`),
	}
}

func (t fetchURL) Call(ctx context.Context, a agent.Agent, raw json.RawMessage) (string, error) {
	var args fetchArgs
	if err := decodeArgs(NameFetchURL, raw, &args); err != nil {
		return "", err
	}
	if err := args.check(); err != nil {
		return "", err
	}
	u, err := url.Parse(strings.TrimSpace(args.URL))
	if err != nil {
		return "", agent.Userf(err, "cannot fetch %q: it is not a valid URL", args.URL)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", agent.Userf(nil, "cannot fetch %q: only http and https URLs can be fetched", args.URL)
	}
	if u.Host == "" {
		return "", agent.Userf(nil, "cannot fetch %q: the URL has no host", args.URL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", agent.Userf(err, "cannot fetch %q: it is not a valid URL", args.URL)
	}
	req.Header.Set("User-Agent", "Deskhand")
	req.Header.Set("Accept", "text/html, text/plain, application/json, application/xml, text/*;q=0.9, */*;q=0.1")
	resp, err := t.client.Do(req.WithContext(withReach(ctx, a.ReachableHosts)))
	var refused *RefusedError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.As(err, &refused) && refused.Always:
		return "", agent.Userf(err, "cannot fetch %q: it leads to %s, which is %s.", args.URL, refused.Where(), refused.Rule)
	case errors.As(err, &refused):
		return "", agent.Userf(err, "cannot fetch %q: it leads to %s, which is %s. %s reaches public internet addresses only; "+
			"the person can let this agent reach a host on their network by adding %q to its \"May reach these hosts on my network\" setting.",
			args.URL, refused.Where(), refused.Rule, NameFetchURL, refused.Addr)
	default:
		return "", agent.Userf(err, "cannot fetch %q: %s", args.URL, netReason(err))
	}
	defer resp.Body.Close()

	declared := resp.Header.Get("Content-Type")
	mediaType := ""
	if declared != "" {
		mediaType, _, _ = mime.ParseMediaType(declared) // keeps the type if only a parameter is bad
		mediaType = strings.ToLower(mediaType)
		if !isText(mediaType) {
			return "", agent.Userf(nil, "cannot show %q: it is %s content (%s), not text; %s reads only text such as HTML, JSON, XML or plain text", args.URL, kindOf(mediaType), declared, NameFetchURL)
		}
	}
	body, cut, err := readCapped(resp.Body, t.max)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", agent.Userf(err, "cannot fetch %q: the connection failed while reading the body: %s", args.URL, netReason(err))
	}
	if declared == "" {
		// No type given: judge by the content, as browsers do.
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		if !isText(mediaType) {
			return "", agent.Userf(nil, "cannot show %q: it declares no content type and looks like %s, not text; %s reads only text", args.URL, mediaType, NameFetchURL)
		}
	}
	if bytes.IndexByte(body, 0) >= 0 {
		return "", agent.Userf(nil, "cannot show %q: its body is binary (it contains NUL bytes) although it claims to be %s", args.URL, mediaType)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", resp.Request.URL.Redacted()) // after redirects
	fmt.Fprintf(&b, "Status: %s\n", statusLine(resp))
	if declared == "" {
		fmt.Fprintf(&b, "Content-Type: (none given; looks like %s)\n\n", mediaType)
	} else {
		fmt.Fprintf(&b, "Content-Type: %s\n\n", declared)
	}
	b.WriteString(asText(body))
	if cut {
		fmt.Fprintf(&b, "\n\n[truncated: the body is longer than the %d-byte limit; only the first %d bytes are shown]", t.max, len(body))
	}
	return b.String(), nil
}

// statusLine is "404 Not Found", whatever the server wrote.
func statusLine(resp *http.Response) string {
	if text := http.StatusText(resp.StatusCode); text != "" {
		return fmt.Sprintf("%d %s", resp.StatusCode, text)
	}
	return fmt.Sprint(resp.StatusCode)
}

// isText reports whether a media type is text the model can read.
func isText(mediaType string) bool {
	if strings.HasPrefix(mediaType, "text/") ||
		strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml") || strings.HasSuffix(mediaType, "+yaml") {
		return true
	}
	switch mediaType {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ecmascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-ndjson", "application/jsonl", "application/sql", "application/graphql",
		"application/x-www-form-urlencoded", "application/x-sh", "application/x-httpd-php":
		return true
	}
	return false
}

// kindOf names a non-text media type's kind for a message.
func kindOf(mediaType string) string {
	major, _, _ := strings.Cut(mediaType, "/")
	switch major {
	case "image", "audio", "video", "font":
		return major
	case "":
		return "unknown"
	}
	return "binary"
}

// netReason is the cause of a failed request without Go's "Get URL:" prefix.
func netReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var timeout interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) && timeout.Timeout() {
		return "it took too long (timed out)"
	}
	return err.Error()
}
