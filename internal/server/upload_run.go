package server

import (
	"archive/tar"
	"compress/gzip"
	"context"
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

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/server/api"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// incomingDir, under the data directory, holds uploads being received. A
// run appears under its id only when whole, by one rename.
const incomingDir = ".incoming"

// maxRunFiles bounds the files of one uploaded run: run.json and a handful
// of profiles. maxRunEntries bounds the entries of a tar.gz, directories
// included.
const (
	maxRunFiles   = 32
	maxRunEntries = 64
)

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
	rcv := &runReceiver{dir: tmp, max: s.cfg.MaxUpload, left: s.cfg.MaxUpload}
	if err := rcv.receive(r, body); err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	saved, err := s.checkRunDir(r.Context(), tmp)
	if err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	if err := s.commitRun(r, tmp, saved); err != nil {
		s.uploadFailed(w, r, "run", err)
		return
	}
	s.metrics.upload("run", "ok", body.n)
	saved.Dir = filepath.Join(s.cfg.DataDir, saved.ID)
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

// A runReceiver writes the files of one uploaded run into dir as they
// stream in, checking each before it reaches the disk: names, counts, and
// sizes against what the run may still take (left, the upload limit, so
// that a tar.gz inflating far beyond its own size is refused at the
// limit) and the run.json limit.
type runReceiver struct {
	dir            string
	max, left      int64
	files, entries int
}

// receive writes the uploaded files by the body's type.
func (rc *runReceiver) receive(r *http.Request, body io.Reader) error {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		ct = ""
	}
	switch ct {
	case "multipart/form-data":
		return rc.multipart(multipart.NewReader(body, params["boundary"]))
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/x-gtar":
		return rc.tarGz(body)
	}
	return badRequest(fmt.Sprintf("Content-Type %q: send the run directory as multipart/form-data or as a tar.gz (application/gzip)", r.Header.Get("Content-Type")))
}

func (rc *runReceiver) multipart(mr *multipart.Reader) error {
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
		if err := rc.save(path.Base(name), part, -1); err != nil {
			return err
		}
	}
}

func (rc *runReceiver) tarGz(body io.Reader) error {
	zr, err := gzip.NewReader(body)
	if err != nil {
		return uploadReadError("read tar.gz body", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return uploadReadError("read tar.gz body", err)
		}
		if rc.entries++; rc.entries > maxRunEntries {
			return badRequest(fmt.Sprintf("more than %d entries in the tar.gz: %s", maxRunEntries, errRunFileNames))
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
		if err := rc.save(path.Base(name), tr, h.Size); err != nil {
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

// save writes one uploaded file, synced, into the directory. size is the
// file's declared size, -1 when unknown; no more than the limits allow is
// written either way.
func (rc *runReceiver) save(name string, src io.Reader, size int64) error {
	if name != run.File && !runFilePattern.MatchString(name) {
		return badRequest(fmt.Sprintf("file %q: %s", name, errRunFileNames))
	}
	if rc.files++; rc.files > maxRunFiles {
		return badRequest(fmt.Sprintf("more than %d files: %s", maxRunFiles, errRunFileNames))
	}
	limit, over := rc.left, tooLarge(fmt.Sprintf("the run's files come to more than the server's limit of %s (perfscope serve --max-upload)", units.Bytes(float64(rc.max))))
	if name == run.File && limit > DefaultMaxRunJSON {
		limit, over = DefaultMaxRunJSON, tooLarge(fmt.Sprintf("run.json is larger than %s: send the run.json 'perfscope profile' saved", units.Bytes(DefaultMaxRunJSON)))
	}
	if size > limit {
		return over
	}
	dst := filepath.Join(rc.dir, name)
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return badRequest(fmt.Sprintf("file %q is in the upload twice", name))
	}
	if err != nil {
		return fmt.Errorf("receive %s: %w", name, err)
	}
	n, err := io.Copy(f, io.LimitReader(src, limit+1))
	if err != nil {
		f.Close()
		return uploadReadError("read "+name, err)
	}
	if n > limit {
		f.Close()
		return over
	}
	rc.left -= n
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("receive %s: %w", name, err)
	}
	return f.Close()
}

// checkRunDir reads the received run and checks it is whole: a valid
// run.json whose listed profiles are all there and parse within the
// server's limits, together too, and nothing else. Profiles are parsed
// one analysis slot at a time, so that concurrent uploads wait their turn
// rather than each take their memory at once.
func (s *Server) checkRunDir(ctx context.Context, dir string) (*run.Run, error) {
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
	var memory int64
	for _, pf := range saved.Profiles {
		if pf.File == "" {
			continue
		}
		if !runFilePattern.MatchString(pf.File) {
			return nil, badRequest(fmt.Sprintf("run.json: profile file %q: want a <kind>.pb.gz name in the run directory", pf.File))
		}
		if listed[pf.File] {
			continue
		}
		listed[pf.File] = true
		st, err := s.checkProfileFile(ctx, filepath.Join(dir, pf.File))
		if err != nil {
			return nil, err
		}
		memory += st.Memory
	}
	if lim := s.profileLimits().MaxMemory; lim > 0 && memory > lim {
		return nil, tooLarge(fmt.Sprintf("the run's profiles would take %s of memory together, over the server's limit of %s for one analysis", units.Bytes(float64(memory)), units.Bytes(float64(lim))))
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

func (s *Server) checkProfileFile(ctx context.Context, p string) (fetch.Stats, error) {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return fetch.Stats{}, badRequest(fmt.Sprintf("run.json lists %s, but the upload has no such file", name))
	}
	if err != nil {
		return fetch.Stats{}, err
	}
	defer f.Close()
	release, err := s.analyses.Parsing(ctx)
	if err != nil {
		return fetch.Stats{}, fmt.Errorf("check %s: %w", name, err)
	}
	defer release()
	_, st, err := fetch.Parse(ctx, f, s.cfg.ProfileLimits)
	switch {
	case errors.Is(err, fetch.ErrTooLarge):
		return st, tooLarge(fmt.Sprintf("%s: %v (perfscope serve --max-profile-size)", name, err))
	case ctx.Err() != nil:
		return st, fmt.Errorf("check %s: %w", name, ctx.Err())
	case err != nil:
		return st, badRequest(fmt.Sprintf("%s is not a pprof profile: %v", name, err))
	}
	return st, nil
}

// profileLimits are the server's profile limits with fetch's defaults
// filled in.
func (s *Server) profileLimits() fetch.Limits {
	lim := s.cfg.ProfileLimits
	if lim.MaxMemory == 0 {
		lim.MaxMemory = fetch.DefaultMaxMemory
	}
	return lim
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

// handleDeleteRun deletes one profiling run: DELETE /api/v1/runs/{id}
// with a token. The run leaves the index and, when it lives in the
// server's data directory (every uploaded run does), its files go too.
// It answers 200 with an api.RunDeleted, 404 for an unknown id. No query
// parameters.
func (s *Server) handleDeleteRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !runIDPattern.MatchString(id) {
		s.fail(w, r, http.StatusBadRequest, badRequest(fmt.Sprintf("run id %q: want 1 to 128 letters, digits, '.', '_' or '-'", id)))
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
	s.pprof.forgetRun(id)
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

// analysisUnavailable answers a request whose run analysis is not ready:
// 503 with the reason and when to ask again.
func (s *Server) analysisUnavailable(w http.ResponseWriter, r *http.Request, saved *run.Run, err error) {
	w.Header().Set("Retry-After", "5")
	if errors.Is(err, analysis.ErrAnalysing) {
		err = fmt.Errorf("run %s is still being analysed: reload in a few seconds", saved.ID)
	}
	s.fail(w, r, http.StatusServiceUnavailable, err)
}
