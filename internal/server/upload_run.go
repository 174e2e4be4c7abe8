package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/store"
)

// handleUploadRun stores one profiling run: POST /api/v1/runs with a token
// and the run directory of 'perfscope profile' as the body, either
//
//	multipart/form-data   one part per file, named by its file name
//	                      (curl -F run.json=@run.json -F cpu.pb.gz=@cpu.pb.gz ...)
//	application/gzip      a tar.gz of the directory (tar czf - -C RUNDIR .)
//
// It takes no query parameters: run.json says everything. Every profile
// run.json lists must be in the upload and parse as a pprof profile
// (runupload.Receive). It answers 201 with an api.RunUpload once the files
// are on disk and the run is indexed, 400 with the reason for a malformed
// upload, 409 when a run with the same id is already stored, 413 over the
// upload limit.
func (s *Server) handleUploadRun(w http.ResponseWriter, r *http.Request) {
	body, ok := s.limitBody(w, r, "run")
	if !ok {
		return
	}
	tmp, err := runupload.NewIncoming(s.cfg.DataDir)
	if err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	defer os.RemoveAll(tmp) // after a successful upload it is gone already
	lim := runupload.Limits{MaxBytes: s.cfg.MaxUpload, Profiles: s.cfg.ProfileLimits, Slot: s.analyses.Parsing}
	saved, err := runupload.Receive(r.Context(), tmp, r.Header.Get("Content-Type"), body, lim)
	if err == nil {
		err = s.commitRun(r.Context(), tmp, saved)
	}
	if err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	s.metrics.Upload("run", "ok", body.n)
	saved.Limits = s.cfg.ProfileLimits
	s.analyses.Start(saved, profiles.Options{})
	n := 0
	for _, p := range saved.Profiles {
		if p.File != "" {
			n++
		}
	}
	writeJSON(w, http.StatusCreated, api.RunUpload{ID: saved.ID, Profiles: n, URL: "/runs/" + saved.ID})
}

// commitRun moves the received run into place and indexes it. The index
// entry is what makes a run exist: a directory left by a crash between the
// move and the index commit was never acknowledged, and is replaced.
func (s *Server) commitRun(ctx context.Context, tmp string, saved *run.Run) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	switch _, err := s.cfg.Store.ProfileRun(ctx, saved.ID); {
	case err == nil:
		return fmt.Errorf("%w: a run with id %s is already stored", errConflict, saved.ID)
	case !errors.Is(err, store.ErrUnknownRun):
		return err
	}
	final, err := runupload.Move(tmp, s.cfg.DataDir, saved.ID)
	if err != nil {
		return err
	}
	saved.Dir = final
	if err := s.cfg.Store.SaveProfileRun(ctx, saved); err != nil {
		os.RemoveAll(final)
		return err
	}
	return nil
}

// handleDeleteRun deletes one profiling run: DELETE /api/v1/runs/{id}
// with a token. The run leaves the index and, when it lives in the
// server's data directory (every uploaded run does), its files go too.
// It answers 200 with an api.RunDeleted, 404 for an unknown id. No query
// parameters.
func (s *Server) handleDeleteRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := runupload.CheckID(id); err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	ctx := r.Context()
	pr, err := s.cfg.Store.ProfileRun(ctx, id)
	if err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	if err := s.cfg.Store.DeleteProfileRun(ctx, id); err != nil {
		s.fail(w, r, statusOf(err), err)
		return
	}
	s.analyses.ForgetRun(id)
	s.pprof.ForgetRun(id)
	res := api.RunDeleted{ID: id}
	if rel, err := filepath.Rel(s.cfg.DataDir, pr.Dir); err == nil && rel == filepath.Base(pr.Dir) && rel == id {
		if err := os.RemoveAll(pr.Dir); err != nil {
			s.cfg.Logf("delete run %s: remove %s: %v", id, pr.Dir, err)
		} else {
			res.Files = true
		}
	}
	writeJSON(w, http.StatusOK, res)
}
