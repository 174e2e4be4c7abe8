package harness

import (
	"log"
	"os"
	"time"
)

// LogSink returns the writing end of a pipe that is drained at about
// bytesPerSecond, as a service's standard output is by a log shipper that
// falls behind at peak: once the pipe's buffer is full, each write waits
// for the reader. The pipe is drained until the process exits.
func LogSink(bytesPerSecond int) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	const tick = time.Millisecond
	chunk := max(1, bytesPerSecond/int(time.Second/tick))
	go func() {
		buf := make([]byte, chunk)
		for range time.Tick(tick) {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	}()
	return w
}
