// Package client is the client of perfscope's HTTP API: it uploads
// benchmark results and profiling runs to a server started with 'perfscope
// serve', as 'perfscope push' does from CI.
//
// An upload counts only once the server acknowledges it, which it does
// after storing it; the answers are the server's own types (package api).
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/perfscope/perfscope/internal/api"
)

// ErrBadInput marks errors in what the caller asked to upload (a file
// without results, a directory that is not a run), as opposed to failures
// of the network or the server.
var ErrBadInput = errors.New("bad input")

// inputError is an error in what the caller asked to upload; it reads as
// its message alone.
type inputError struct{ msg string }

func (e inputError) Error() string        { return e.msg }
func (e inputError) Is(target error) bool { return target == ErrBadInput }

func badInput(format string, args ...any) error { return inputError{fmt.Sprintf(format, args...)} }

// A Client uploads to one server with one token.
type Client struct {
	base  string // the server's URL, without a trailing slash
	token string
	http  *http.Client
}

// New returns a client of the server at serverURL (http or https, such as
// http://perf.example.com:7070) that authenticates with token, a token
// made by 'perfscope token create' (uploads need one; the server says so
// when it is missing or wrong). A nil hc means http.DefaultClient.
func New(serverURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want a URL such as http://perf.example.com:7070", serverURL)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(serverURL, "/"), token: token, http: hc}, nil
}

// url resolves a path the server answered with (a dashboard page) against
// the server's URL.
func (c *Client) url(path string) string { return c.base + path }

// post sends body to path and decodes a 201 answer into out. It returns
// the status for 201 and 409 (the server has it already); any other
// answer is an error carrying the server's message.
func (c *Client) post(ctx context.Context, path, contentType string, body io.Reader, out any) (int, error) {
	return c.do(ctx, http.MethodPost, path, contentType, body, http.StatusCreated, "upload", out)
}

// do sends one request and decodes an answer with status ok into out. It
// returns the status for ok and 409; any other answer is an error
// carrying the server's message about the action (upload, deletion).
func (c *Client) do(ctx context.Context, method, path, contentType string, body io.Reader, ok int, action string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), body)
	if err != nil {
		return 0, fmt.Errorf("%s at %s: %w", action, c.base, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach the perfscope server at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("read the server's answer: %w", err)
	}
	switch resp.StatusCode {
	case ok:
		if err := json.Unmarshal(data, out); err != nil {
			return 0, fmt.Errorf("the server at %s answered something that is not perfscope's JSON: %w", c.base, err)
		}
		return resp.StatusCode, nil
	case http.StatusConflict:
		return resp.StatusCode, nil
	}
	var apiErr api.Error
	if json.Unmarshal(data, &apiErr) != nil || apiErr.Error == "" {
		apiErr.Error = strings.TrimSpace(string(data))
		if len(apiErr.Error) > 200 {
			apiErr.Error = apiErr.Error[:200] + "..."
		}
	}
	return 0, fmt.Errorf("the server refused the %s (%s): %s", action, resp.Status, apiErr.Error)
}
