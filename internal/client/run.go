package client

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/run"
)

// PushRun uploads the run directory dir saved by 'perfscope profile' (its
// run.json and the profiles it lists) as multipart/form-data, streamed
// from disk. A run the server already has is not an error: PushRun then
// returns it with existed set. The answer's URL is absolute.
//
// A directory that is not a run is an ErrBadInput error.
func (c *Client) PushRun(ctx context.Context, dir string) (res *api.RunUpload, existed bool, err error) {
	saved, err := run.Load(dir)
	if err != nil {
		return nil, false, inputError{err.Error()}
	}
	files := []string{run.File}
	for _, pf := range saved.Profiles {
		if pf.File != "" {
			files = append(files, pf.File)
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, false, fmt.Errorf("run %s is incomplete: %w", dir, err)
		}
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeParts(mw, dir, files)) }()
	res = &api.RunUpload{}
	code, err := c.post(ctx, api.RunsPath, mw.FormDataContentType(), pr, res)
	pr.Close()
	if err != nil {
		return nil, false, err
	}
	if code == http.StatusConflict {
		res = &api.RunUpload{ID: saved.ID, URL: "/runs/" + saved.ID}
	}
	res.URL = c.url(res.URL)
	return res, code == http.StatusConflict, nil
}

// writeParts writes each file of dir as a part named by its file name.
func writeParts(mw *multipart.Writer, dir string, files []string) error {
	for _, name := range files {
		part, err := mw.CreateFormFile(name, name)
		if err != nil {
			return err
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		_, err = io.Copy(part, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("send %s: %w", name, err)
		}
	}
	return mw.Close()
}

// DeleteRun deletes the profiling run id from the server, its files
// included when the server keeps them.
func (c *Client) DeleteRun(ctx context.Context, id string) (*api.RunDeleted, error) {
	res := &api.RunDeleted{}
	if _, err := c.do(ctx, http.MethodDelete, api.RunsPath+"/"+url.PathEscape(id), "", nil, http.StatusOK, "deletion", res); err != nil {
		return nil, err
	}
	return res, nil
}
