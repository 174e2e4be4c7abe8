package loadgen

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A worker sends one request at a time over its own connection. Everything
// it counts lives in its own fields, so the hot path takes no locks and
// allocates nothing; the supervisor merges workers when the run ends.
type worker struct {
	run  *run
	conn net.Conn // written only under mu, read freely by the worker itself
	// reused reports whether conn has carried a response already.
	reused bool
	rr     *responseReader
	raw    *rawRoundTrip // nil on TLS connections
	timer  *time.Timer   // open loop: waits for intended send times

	hist             *hdrhistogram.Histogram // microseconds
	recorded         int64                   // latencies recorded in hist
	sumNs            int64
	minNs, maxNs     int64
	kinds            [numKinds]int64
	status           [1000]int64
	bytesWritten     int64
	sent, late       int64 // open loop
	maxLag           int64 // open loop, nanoseconds
	_                [64]byte
	completed        atomic.Int64 // read by the progress meter
	failed           atomic.Int64
	inflight, killed atomic.Int64 // see run.killOverdue
	mu               sync.Mutex   // guards conn against run.killOverdue and run.abortAll
	_                [64]byte
}

func newWorker(r *run) *worker {
	return &worker{
		run:   r,
		rr:    newResponseReader(),
		hist:  hdrhistogram.New(1, maxLatencyMicros, 3),
		minNs: 1<<63 - 1,
	}
}

// closedLoop sends requests back to back until the run says stop.
func (w *worker) closedLoop() {
	r := w.run
	defer w.closeConn()
	for !r.stopSending.Load() {
		if r.cfg.Requests > 0 && r.tickets.Add(1) > r.cfg.Requests {
			return
		}
		if !w.do(r.now()) {
			return
		}
	}
}

// openLoop takes the next intended send time, waits for it and sends. All
// workers draw from one schedule, so when every worker is busy the next
// send leaves late, and its latency still counts from when it was due.
func (w *worker) openLoop() {
	r := w.run
	defer w.closeConn()
	if w.timer == nil {
		w.timer = time.NewTimer(time.Hour)
		defer w.timer.Stop()
	}
	for {
		t := r.tickets.Add(1) - 1
		if r.cfg.Requests > 0 && t >= r.cfg.Requests {
			return
		}
		due := r.startAt + int64(float64(t)*r.interval)
		if r.cfg.Duration > 0 && due >= r.startAt+int64(r.cfg.Duration) {
			return
		}
		if d := due - r.now(); d > 0 {
			w.timer.Reset(time.Duration(d))
			select {
			case <-w.timer.C:
			case <-r.abortCh:
				return
			}
		}
		if r.stopSending.Load() {
			return // behind schedule when the window closed: the rest are dropped
		}
		if lag := r.now() - due; lag > int64(lateThreshold) {
			w.late++
			w.maxLag = max(w.maxLag, lag)
		}
		w.sent++
		if !w.do(due) {
			return
		}
	}
}

// do sends one request and counts its outcome, measuring latency from
// `from`. It returns false when the run was aborted, leaving the request
// uncounted.
func (w *worker) do(from int64) bool {
	r := w.run
	for attempt := 0; ; attempt++ {
		if w.conn == nil {
			if err := w.connect(); err != nil {
				if r.aborted() {
					return false
				}
				w.fail(classify(err))
				return true
			}
		}
		reused, readBefore := w.reused, w.rr.nread
		sent := r.now()
		w.inflight.Store(sent)
		resp, err := w.roundTrip()
		w.inflight.Store(0)
		if err != nil {
			w.closeConn()
			if r.aborted() {
				return false
			}
			if attempt < 3 {
				if errors.Is(err, os.ErrDeadlineExceeded) && w.killed.Load() != sent {
					// The deadline was meant for the previous request on
					// this connection, which finished just in time.
					continue
				}
				if attempt == 0 && reused && w.rr.nread == readBefore && retryable(err) {
					continue
				}
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				w.fail(kindTimeout)
			} else {
				w.fail(classify(err))
			}
			return true
		}
		end := r.now()
		w.reused = true
		if resp.close || r.cfg.DisableKeepAlive {
			w.closeConn()
		}
		w.record(resp.status, end-from)
		return true
	}
}

func (w *worker) connect() error {
	r := w.run
	c, err := r.dialer.dial(r.ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if r.abort.Load() {
		w.mu.Unlock()
		c.Close()
		return errAborted
	}
	w.conn = c
	w.mu.Unlock()
	w.rr.reset(c)
	w.reused = false
	if w.run.useRaw {
		w.raw = newRawRoundTrip(c)
	} else {
		w.raw = nil
	}
	return nil
}

// roundTrip sends the request on w.conn and reads the response.
func (w *worker) roundTrip() (response, error) {
	req := w.run.req
	if w.raw != nil && !w.rr.buffered() {
		rr := w.rr
		rr.r, rr.w = 0, 0
		written, n, err := w.raw.roundTrip(req, rr.buf)
		w.bytesWritten += int64(written)
		rr.w = n
		rr.nread += int64(n)
		if err != nil {
			return response{}, err
		}
		req = req[written:]
		if len(req) == 0 {
			return rr.readResponse(w.run.head)
		}
	}
	n, err := w.conn.Write(req)
	w.bytesWritten += int64(n)
	if err != nil {
		return response{}, err
	}
	return w.rr.readResponse(w.run.head)
}

var errAborted = errors.New("run aborted")

func (w *worker) closeConn() {
	if w.conn == nil {
		return
	}
	w.mu.Lock()
	c := w.conn
	w.conn = nil
	w.mu.Unlock()
	c.Close()
}

func (w *worker) record(status int, latency int64) {
	w.status[status]++
	if status < 200 || status > 299 {
		w.failed.Add(1)
	}
	us := min(max(latency/1e3, 1), maxLatencyMicros)
	_ = w.hist.RecordValue(us) // in range by construction
	w.recorded++
	w.sumNs += latency
	w.minNs = min(w.minNs, latency)
	w.maxNs = max(w.maxNs, latency)
	w.completed.Add(1)
}

func (w *worker) fail(k errorKind) {
	w.kinds[k]++
	w.failed.Add(1)
	w.completed.Add(1)
}
