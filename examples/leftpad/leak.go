package leftpad

import (
	"net/http"
	"sync/atomic"
)

// auditEvery is how many requests the leaky mode serves per goroutine it
// leaks.
const auditEvery = 100

// auditor is the bug of the leaky mode, one often found in real services:
// every auditEvery-th request hands what it asked for to a goroutine that
// waits for an acknowledgement before reporting it, and nothing ever
// acknowledges. Each such goroutine is parked forever, holding the
// request's URL: goroutines and heap in use grow with the requests served, for
// as long as the process lives. A nil auditor leaks nothing.
type auditor struct {
	served atomic.Int64
}

// wrap returns h with every request counted by a.
func (a *auditor) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		a.request(r.URL.String())
	})
}

// request counts a request and, every auditEvery-th, starts the
// goroutine that leaks.
func (a *auditor) request(response string) {
	if a == nil || a.served.Add(1)%auditEvery != 0 {
		return
	}
	ack := make(chan struct{})
	go awaitAudit(ack, response)
}

// awaitAudit waits for an acknowledgement that never comes: no one else
// holds ack. Go's goroutineleak profile (GOEXPERIMENT=goroutineleakprofile)
// finds goroutines like this one.
func awaitAudit(ack <-chan struct{}, response string) {
	<-ack
	_ = response
}
