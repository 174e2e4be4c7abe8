package runupload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/run"
)

// IncomingDir, under a data directory, holds uploads being received. A run
// appears under its id only when whole, by one rename (Move).
const IncomingDir = ".incoming"

// MaxRunJSON bounds an uploaded run.json: a real one is a few KiB.
const MaxRunJSON = 1 << 20

// maxRunFiles bounds the files of one uploaded run: run.json and a handful
// of profiles. maxRunEntries bounds the entries of a tar.gz, directories
// included.
const (
	maxRunFiles   = 32
	maxRunEntries = 64
)

var (
	idPattern       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	filePattern     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.pb\.gz$`)
	errRunFileNames = "files are run.json and the <kind>.pb.gz profiles it lists"
)

// Limits bound what receiving one run may cost.
type Limits struct {
	// MaxBytes bounds the run's files together as written to disk, a
	// tar.gz's inflated entries included. Required.
	MaxBytes int64
	// Profiles bound reading each profile; zero fields are fetch's
	// defaults. Its MaxMemory bounds the profiles together too, as one
	// analysis holds them.
	Profiles fetch.Limits
	// Slot, when set, is called before each profile is parsed and its
	// release after, so that concurrent uploads take their turn with
	// whatever else reads profiles rather than each take their memory
	// at once.
	Slot func(ctx context.Context) (release func(), err error)
}

// An InputError is why an upload was refused for what its sender sent:
// with Cap, something passes a limit; else it is not a run directory or
// could not be read whole. Err is the reason, wrapping the body reader's
// error when reading failed.
type InputError struct {
	Cap bool
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func malformed(msg string) error { return &InputError{Err: simpleError(msg)} }
func tooLarge(msg string) error  { return &InputError{Cap: true, Err: simpleError(msg)} }

type simpleError string

func (e simpleError) Error() string { return string(e) }

// CheckID refuses a run id that cannot be a directory name in a data
// directory.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return malformed(fmt.Sprintf("run id %q: want 1 to 128 letters, digits, '.', '_' or '-'", id))
	}
	return nil
}

// Receive writes the run in body into dir, an empty directory, and checks
// that it is whole: a valid run.json whose listed profiles are all there
// and parse within the limits, together too, and nothing else.
// contentType is the body's media type: multipart/form-data, one part per
// file named by its file name, or a tar.gz (application/gzip) of the
// directory, archived from inside it or from above. On an error dir may
// hold part of the upload; the caller removes it.
func Receive(ctx context.Context, dir, contentType string, body io.Reader, lim Limits) (*run.Run, error) {
	rc := &receiver{dir: dir, max: lim.MaxBytes, left: lim.MaxBytes}
	if err := rc.receive(contentType, body); err != nil {
		return nil, err
	}
	return check(ctx, dir, lim)
}

// NewIncoming creates a fresh directory under dataDir's IncomingDir for
// one upload.
func NewIncoming(dataDir string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	dir := filepath.Join(dataDir, IncomingDir, hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("receive upload: %w", err)
	}
	return dir, nil
}

// ResetIncoming empties dataDir's IncomingDir, creating it if need be:
// uploads cut short by a crash were never acknowledged.
func ResetIncoming(dataDir string) error {
	incoming := filepath.Join(dataDir, IncomingDir)
	if err := os.RemoveAll(incoming); err != nil {
		return fmt.Errorf("clean %s: %w", incoming, err)
	}
	if err := os.MkdirAll(incoming, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	return nil
}

// Move puts a received run in place, durably: tmp becomes dataDir/id by
// one rename, replacing whatever was there (a directory left by a crash
// before it was acknowledged). It returns the run's directory.
func Move(tmp, dataDir, id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	if err := syncDir(tmp); err != nil {
		return "", fmt.Errorf("store run %s: %w", id, err)
	}
	final := filepath.Join(dataDir, id)
	if err := os.RemoveAll(final); err != nil {
		return "", fmt.Errorf("store run %s: %w", id, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("store run %s: %w", id, err)
	}
	if err := syncDir(dataDir); err != nil {
		os.RemoveAll(final)
		return "", fmt.Errorf("store run %s: %w", id, err)
	}
	return final, nil
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
