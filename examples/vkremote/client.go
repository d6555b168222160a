package vkremote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
)

// Client calls the remote service's JSON API (see Service). An answer 404
// is an error errdefs.IsNotFound reads as NotFound: errdefs.AsNotFound
// marks it in a way VK's IsNotFound finds (it follows Cause, as
// github.com/pkg/errors' Wrap provides, not fmt.Errorf's %w).
type Client struct {
	// BaseURL is the service's address, "http://host:port" (no trailing
	// slash).
	BaseURL string
	// HTTP sends the requests; nil is http.DefaultClient. Tests give it a
	// transport that dials an in-memory listener.
	HTTP *http.Client
}

// Create creates g, or answers the group of that ID the service runs
// already (unchanged: a retried create starts nothing again).
func (c *Client) Create(ctx context.Context, g *Group) (*Group, error) {
	var out Group
	return &out, c.do(ctx, http.MethodPut, "/v1/groups/"+url.PathEscape(g.ID), g, &out)
}

// Get answers the group of that ID.
func (c *Client) Get(ctx context.Context, id string) (*Group, error) {
	var out Group
	return &out, c.do(ctx, http.MethodGet, "/v1/groups/"+url.PathEscape(id), nil, &out)
}

// List answers the groups that carry every tag of tags, ordered by ID.
func (c *Client) List(ctx context.Context, tags map[string]string) ([]Group, error) {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := url.Values{}
	for _, k := range keys {
		q.Add("tag", k+"="+tags[k])
	}
	var out []Group
	return out, c.do(ctx, http.MethodGet, "/v1/groups?"+q.Encode(), nil, &out)
}

// Delete stops the group's containers, giving them graceSeconds after
// SIGTERM, and answers its last state once they have exited.
func (c *Client) Delete(ctx context.Context, id string, graceSeconds int64) (*Group, error) {
	var out Group
	return &out, c.do(ctx, http.MethodDelete, fmt.Sprintf("/v1/groups/%s?grace=%d", url.PathEscape(id), graceSeconds), nil, &out)
}

// Healthz answers nil while the service is up.
func (c *Client) Healthz(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/v1/healthz", nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		var e apiError
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Message == "" {
			e.Message = resp.Status
		}
		err := fmt.Errorf("remote service: %s %s: %s", method, path, e.Message)
		if resp.StatusCode == http.StatusNotFound {
			return errdefs.AsNotFound(err)
		}
		return err
	}
	if out == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
