package server

import (
	"archive/tar"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/server/api"
	"github.com/perfscope/perfscope/internal/store"
)

// incomingDir, under the data directory, holds uploads being received. A
// run appears under its id only when whole, by one rename.
const incomingDir = ".incoming"

// maxRunFiles bounds the files of one uploaded run: run.json and a handful
// of profiles.
const maxRunFiles = 32

var (
	runIDPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	runFilePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.pb\.gz$`)
	errRunFileNames = "files are run.json and the <kind>.pb.gz profiles it lists"
)

// handleUploadRun stores one profiling run: POST /api/v1/runs with a token
// and the run directory of 'perfscope profile' as the body, either
//
//	multipart/form-data   one part per file, named by its file name
//	                      (curl -F run.json=@run.json -F cpu.pb.gz=@cpu.pb.gz ...)
//	application/gzip      a tar.gz of the directory (tar czf - -C RUNDIR .)
//
// It takes no query parameters: run.json says everything. Every profile
// run.json lists must be in the upload and parse as a pprof profile. It
// answers 201 with an api.RunUpload once the files are on disk and the run
// is indexed, 400 with the reason for a malformed upload, 409 when a run
// with the same id is already stored, 413 over the upload limit.
func (s *Server) handleUploadRun(w http.ResponseWriter, r *http.Request) {
	body, ok := s.limitBody(w, r, "run")
	if !ok {
		return
	}
	tmp, err := s.newIncoming()
	if err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	defer os.RemoveAll(tmp) // after a successful upload it is gone already
	if err := receiveRunFiles(r, body, tmp); err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	saved, err := checkRunDir(tmp)
	if err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	if err := s.commitRun(r, tmp, saved); err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	s.metrics.upload("run", "ok", body.n)
	n := 0
	for _, p := range saved.Profiles {
		if p.File != "" {
			n++
		}
	}
	writeJSON(w, http.StatusCreated, api.RunUpload{ID: saved.ID, Profiles: n, URL: "/runs/" + saved.ID})
}

// newIncoming creates a fresh directory for one upload.
func (s *Server) newIncoming() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	dir := filepath.Join(s.cfg.DataDir, incomingDir, hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("receive upload: %w", err)
	}
	return dir, nil
}

// receiveRunFiles writes the uploaded files into dir, by the body's type.
func receiveRunFiles(r *http.Request, body io.Reader, dir string) error {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		ct = ""
	}
	switch ct {
	case "multipart/form-data":
		return receiveMultipart(multipart.NewReader(body, params["boundary"]), dir)
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/x-gtar":
		return receiveTarGz(body, dir)
	}
	return badRequest(fmt.Sprintf("Content-Type %q: send the run directory as multipart/form-data or as a tar.gz (application/gzip)", r.Header.Get("Content-Type")))
}

func receiveMultipart(mr *multipart.Reader, dir string) error {
	files := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return uploadReadError("read multipart body", err)
		}
		name := part.FileName()
		if name == "" {
			name = part.FormName()
		}
		if files++; files > maxRunFiles {
			return badRequest(fmt.Sprintf("more than %d files: %s", maxRunFiles, errRunFileNames))
		}
		if err := saveRunFile(dir, path.Base(name), part); err != nil {
			return err
		}
	}
}

func receiveTarGz(body io.Reader, dir string) error {
	zr, err := gzip.NewReader(body)
	if err != nil {
		return uploadReadError("read tar.gz body", err)
	}
	tr := tar.NewReader(zr)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return uploadReadError("read tar.gz body", err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return badRequest(fmt.Sprintf("%s in the tar.gz is not a regular file: %s", h.Name, errRunFileNames))
		}
		// "./cpu.pb.gz" and "RUNID/cpu.pb.gz" both name cpu.pb.gz: a
		// run directory may be archived from inside or from above.
		name := path.Clean(h.Name)
		if strings.Count(name, "/") > 1 {
			return badRequest(fmt.Sprintf("%s in the tar.gz is nested too deep: %s", h.Name, errRunFileNames))
		}
		if files++; files > maxRunFiles {
			return badRequest(fmt.Sprintf("more than %d files: %s", maxRunFiles, errRunFileNames))
		}
		if err := saveRunFile(dir, path.Base(name), tr); err != nil {
			return err
		}
	}
}

// uploadReadError keeps an over-limit body a 413 and makes anything else
// unreadable a 400.
func uploadReadError(what string, err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	return badRequest(fmt.Sprintf("%s: %v", what, err))
}

// saveRunFile writes one uploaded file, synced, into dir.
func saveRunFile(dir, name string, src io.Reader) error {
	if name != run.File && !runFilePattern.MatchString(name) {
		return badRequest(fmt.Sprintf("file %q: %s", name, errRunFileNames))
	}
	dst := filepath.Join(dir, name)
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return badRequest(fmt.Sprintf("file %q is in the upload twice", name))
	}
	if err != nil {
		return fmt.Errorf("receive %s: %w", name, err)
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return uploadReadError("read "+name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("receive %s: %w", name, err)
	}
	return f.Close()
}

// checkRunDir reads the received run and checks it is whole: a valid
// run.json whose listed profiles are all there and parse, and nothing else.
func checkRunDir(dir string) (*run.Run, error) {
	data, err := os.ReadFile(filepath.Join(dir, run.File))
	if errors.Is(err, os.ErrNotExist) {
		return nil, badRequest("the upload has no run.json: send the directory 'perfscope profile' saved")
	}
	if err != nil {
		return nil, err
	}
	var saved run.Run
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, badRequest(fmt.Sprintf("run.json is not a valid run description: %v", err))
	}
	if !runIDPattern.MatchString(saved.ID) {
		return nil, badRequest(fmt.Sprintf("run.json: run id %q: want 1 to 128 letters, digits, '.', '_' or '-'", saved.ID))
	}
	listed := map[string]bool{run.File: true}
	for _, pf := range saved.Profiles {
		if pf.File == "" {
			continue
		}
		if !runFilePattern.MatchString(pf.File) {
			return nil, badRequest(fmt.Sprintf("run.json: profile file %q: want a <kind>.pb.gz name in the run directory", pf.File))
		}
		listed[pf.File] = true
		if err := checkProfileFile(filepath.Join(dir, pf.File)); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			return nil, badRequest(fmt.Sprintf("file %q is not listed in run.json's profiles", e.Name()))
		}
	}
	return &saved, nil
}

func checkProfileFile(p string) error {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return badRequest(fmt.Sprintf("run.json lists %s, but the upload has no such file", name))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := profile.Parse(f); err != nil {
		return badRequest(fmt.Sprintf("%s is not a pprof profile: %v", name, err))
	}
	return nil
}

// commitRun moves the received run into place and indexes it. The index
// entry is what makes a run exist: a directory left by a crash between the
// rename and the index commit was never acknowledged, and is replaced.
func (s *Server) commitRun(r *http.Request, tmp string, saved *run.Run) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	ctx := r.Context()
	switch _, err := s.cfg.Store.ProfileRun(ctx, saved.ID); {
	case err == nil:
		return fmt.Errorf("%w: a run with id %s is already stored", errConflict, saved.ID)
	case !errors.Is(err, store.ErrUnknownRun):
		return err
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("store run %s: %w", saved.ID, err)
	}
	final := filepath.Join(s.cfg.DataDir, saved.ID)
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("store run %s: %w", saved.ID, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("store run %s: %w", saved.ID, err)
	}
	if err := syncDir(s.cfg.DataDir); err != nil {
		os.RemoveAll(final)
		return fmt.Errorf("store run %s: %w", saved.ID, err)
	}
	saved.Dir = final
	if err := s.cfg.Store.SaveProfileRun(ctx, saved); err != nil {
		os.RemoveAll(final)
		return err
	}
	return nil
}

// syncDir makes a rename inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
