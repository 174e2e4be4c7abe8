package runupload

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/units"
)

// A receiver writes the files of one uploaded run into dir as they stream
// in, checking each before it reaches the disk: names, counts, and sizes
// against what the run may still take (left, of max, so that a tar.gz
// inflating far beyond its own size is refused at the limit) and the
// run.json limit.
type receiver struct {
	dir            string
	max, left      int64
	files, entries int
}

// receive writes the uploaded files by the body's type.
func (rc *receiver) receive(contentType string, body io.Reader) error {
	ct, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		ct = ""
	}
	switch ct {
	case "multipart/form-data":
		return rc.multipart(multipart.NewReader(body, params["boundary"]))
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip", "application/x-gtar":
		return rc.tarGz(body)
	}
	return malformed(fmt.Sprintf("Content-Type %q: send the run directory as multipart/form-data or as a tar.gz (application/gzip)", contentType))
}

func (rc *receiver) multipart(mr *multipart.Reader) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return readError("read multipart body", err)
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

func (rc *receiver) tarGz(body io.Reader) error {
	zr, err := gzip.NewReader(body)
	if err != nil {
		return readError("read tar.gz body", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return readError("read tar.gz body", err)
		}
		if rc.entries++; rc.entries > maxRunEntries {
			return malformed(fmt.Sprintf("more than %d entries in the tar.gz: %s", maxRunEntries, errRunFileNames))
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return malformed(fmt.Sprintf("%s in the tar.gz is not a regular file: %s", h.Name, errRunFileNames))
		}
		// "./cpu.pb.gz" and "RUNID/cpu.pb.gz" both name cpu.pb.gz: a
		// run directory may be archived from inside or from above.
		name := path.Clean(h.Name)
		if strings.Count(name, "/") > 1 {
			return malformed(fmt.Sprintf("%s in the tar.gz is nested too deep: %s", h.Name, errRunFileNames))
		}
		if err := rc.save(path.Base(name), tr, h.Size); err != nil {
			return err
		}
	}
}

// readError is the sender's: a body that could not be read whole. It
// wraps the reader's error, so that a body reader's own refusal (a server's
// limit on the body) is still found in it.
func readError(what string, err error) error {
	return &InputError{Err: fmt.Errorf("%s: %w", what, err)}
}

// save writes one uploaded file, synced, into the directory. size is the
// file's declared size, -1 when unknown; no more than the limits allow is
// written either way.
func (rc *receiver) save(name string, src io.Reader, size int64) error {
	if name != run.File && !filePattern.MatchString(name) {
		return malformed(fmt.Sprintf("file %q: %s", name, errRunFileNames))
	}
	if rc.files++; rc.files > maxRunFiles {
		return malformed(fmt.Sprintf("more than %d files: %s", maxRunFiles, errRunFileNames))
	}
	limit, over := rc.left, tooLarge(fmt.Sprintf("the run's files come to more than the server's limit of %s (perfscope serve --max-upload)", units.Bytes(float64(rc.max))))
	if name == run.File && limit > MaxRunJSON {
		limit, over = MaxRunJSON, tooLarge(fmt.Sprintf("run.json is larger than %s: send the run.json 'perfscope profile' saved", units.Bytes(MaxRunJSON)))
	}
	if size > limit {
		return over
	}
	dst := filepath.Join(rc.dir, name)
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return malformed(fmt.Sprintf("file %q is in the upload twice", name))
	}
	if err != nil {
		return fmt.Errorf("receive %s: %w", name, err)
	}
	n, err := io.Copy(f, io.LimitReader(src, limit+1))
	if err != nil {
		f.Close()
		return readError("read "+name, err)
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
