package fetch

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/units"
)

// Defaults of Limits. They are several times what real Go profiles reach:
// a 10-second CPU profile of a busy service inflates to a few hundred KiB
// with under 10,000 samples; a heap profile of a large service to a few
// MiB. (Grafana Pyroscope refuses profiles over 4 MiB inflated or 16,000
// samples by default.)
const (
	DefaultMaxBytes     = 64 << 20  // inflated size
	DefaultMaxSamples   = 1_000_000 // sample rows
	DefaultMaxLocations = 1_000_000 // distinct locations
	DefaultMaxMemory    = 512 << 20 // estimated memory of the parsed profile
)

// Limits bound what reading one profile may cost. Zero fields mean the
// defaults above; a negative field means no limit.
type Limits struct {
	// MaxBytes bounds the profile's size once inflated.
	MaxBytes int64
	// MaxSamples bounds its sample rows.
	MaxSamples int64
	// MaxLocations bounds its distinct locations (program counters).
	MaxLocations int64
	// MaxMemory bounds the memory parsing it would take, estimated from
	// its counts before parsing: a profile's protobuf expands several
	// times in memory, up to about a hundred times for samples that
	// carry labels, so its inflated size alone does not bound it.
	MaxMemory int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, DefaultMaxBytes)
	def(&l.MaxSamples, DefaultMaxSamples)
	def(&l.MaxLocations, DefaultMaxLocations)
	def(&l.MaxMemory, DefaultMaxMemory)
	return l
}

// ErrTooLarge marks errors about a profile beyond a limit; errors.Is
// recognises every *LimitError as one.
var ErrTooLarge = errors.New("profile too large")

// A LimitError says which limit a profile exceeded.
type LimitError struct {
	// What is the measure: "inflated size", "samples", "locations" or
	// "estimated memory".
	What string
	// Limit is the limit; Got what the profile has, or at least, for
	// sizes read up to the limit only, Limit+1.
	Limit, Got int64
	// Bytes says the measure is in bytes.
	Bytes bool
}

func (e *LimitError) Error() string {
	f := units.Thousands
	if e.Bytes {
		f = func(v int64) string { return units.Bytes(float64(v)) }
	}
	if e.Got == e.Limit+1 && e.Bytes {
		// Read up to the limit only: the true size is unknown.
		return fmt.Sprintf("profile too large: its %s is over the limit of %s", e.What, f(e.Limit))
	}
	return fmt.Sprintf("profile too large: %s %s, over the limit of %s", e.What, f(e.Got), f(e.Limit))
}

func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// Stats describe a profile read through the bounded reader.
type Stats struct {
	// Compressed is the bytes read; Inflated their size inflated (equal
	// when the profile was not gzipped).
	Compressed, Inflated int64
	Samples, Locations   int64
	// Memory is the estimated memory of the parsed profile.
	Memory int64
}

// Parse reads one pprof profile (gzipped or not, protobuf or one of the
// legacy text formats pprof reads) from r within lim: it inflates no
// more than lim.MaxBytes, counts the profile's samples and locations
// and estimates the memory parsing would take before parsing, and
// refuses with a *LimitError past any limit. Reading stops when ctx is
// done. Every profile perfscope reads from outside comes through here:
// uploads, pprof endpoints, files named on the command line.
func Parse(ctx context.Context, r io.Reader, lim Limits) (*profile.Profile, Stats, error) {
	lim = lim.withDefaults()
	data, st, err := inflate(ctx, r, lim)
	if err != nil {
		return nil, st, err
	}
	if err := checkCounts(data, lim, &st); err != nil {
		return nil, st, err
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, st, err
	}
	return p, st, nil
}

// ParseFile reads the profile at path through Parse.
func ParseFile(ctx context.Context, path string, lim Limits) (*profile.Profile, Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stats{}, err
	}
	defer f.Close()
	p, st, err := Parse(ctx, f, lim)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", path, err)
	}
	return p, st, nil
}

// inflate reads r whole, inflating it when gzipped, up to lim.MaxBytes.
func inflate(ctx context.Context, r io.Reader, lim Limits) ([]byte, Stats, error) {
	var st Stats
	counted := &countingReader{ctx: ctx, r: r}
	br := bufio.NewReader(counted)
	var src io.Reader = br
	if head, _ := br.Peek(2); isGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, st, fmt.Errorf("decompressing profile: %w", err)
		}
		src = zr
	}
	chunks, n, err := readChunks(io.LimitReader(src, lim.MaxBytes+1))
	st.Compressed, st.Inflated = counted.n, n
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, st, ctxErr
		}
		return nil, st, fmt.Errorf("decompressing profile: %w", err)
	}
	if n > lim.MaxBytes {
		return nil, st, &LimitError{What: "inflated size", Limit: lim.MaxBytes, Got: lim.MaxBytes + 1, Bytes: true}
	}
	data := make([]byte, 0, n)
	for _, c := range chunks {
		data = append(data, c...)
	}
	if isGzip(data) {
		// pprof would inflate it again, without a bound.
		return nil, st, errors.New("decompressing profile: gzip inside gzip: a profile is gzipped once")
	}
	return data, st, nil
}

// The pieces readChunks reads start at firstChunk bytes and double up to
// maxChunk: a profile of a few KB (most are) costs no MB-sized buffer, and
// a scraper reads hundreds at once.
const (
	firstChunk = 32 << 10
	maxChunk   = 1 << 20
)

// readChunks reads r to its end in pieces, so that what a refused profile
// costs is what was read, with none of the copies a growing buffer makes,
// and an accepted one is copied once, at its size.
func readChunks(r io.Reader) ([][]byte, int64, error) {
	var chunks [][]byte
	var n int64
	size := firstChunk
	for {
		c := make([]byte, size)
		size = min(2*size, maxChunk)
		k := 0
		var err error
		for k < len(c) && err == nil {
			var m int
			m, err = r.Read(c[k:])
			k += m
		}
		if k > 0 {
			chunks = append(chunks, c[:k])
			n += int64(k)
		}
		switch {
		case errors.Is(err, io.EOF):
			return chunks, n, nil
		case err != nil:
			// io.ErrUnexpectedEOF included: a stream cut short.
			return nil, n, err
		}
	}
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// countingReader counts what it reads and stops once ctx is done.
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// checkCounts counts data's samples and locations, estimates the memory
// parsing it takes, and checks both against lim.
func checkCounts(data []byte, lim Limits, st *Stats) error {
	c, err := countProfile(data)
	if err != nil {
		// Not a protobuf profile: pprof tries its legacy text formats,
		// whose parsed size follows the text's.
		c = counts{}
		st.Memory = legacyMemoryPerByte * int64(len(data))
	} else {
		st.Samples, st.Locations = c.samples, c.locations
		st.Memory = c.memory(int64(len(data)))
	}
	switch {
	case c.samples > lim.MaxSamples && lim.MaxSamples > 0:
		return &LimitError{What: "samples", Limit: lim.MaxSamples, Got: c.samples}
	case c.locations > lim.MaxLocations && lim.MaxLocations > 0:
		return &LimitError{What: "locations", Limit: lim.MaxLocations, Got: c.locations}
	case st.Memory > lim.MaxMemory && lim.MaxMemory > 0:
		return &LimitError{What: "estimated memory", Limit: lim.MaxMemory, Got: st.Memory, Bytes: true}
	}
	return nil
}

// EstimateMemory returns the memory parsing an inflated profile would
// take, as Parse estimates it.
func EstimateMemory(data []byte) int64 {
	c, err := countProfile(data)
	if err != nil {
		return legacyMemoryPerByte * int64(len(data))
	}
	return c.memory(int64(len(data)))
}
