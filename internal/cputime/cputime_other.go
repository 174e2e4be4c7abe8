//go:build !unix && !windows

package cputime

import (
	"errors"
	"time"
)

func process() (time.Duration, error) {
	return 0, errors.New("process CPU time is not available on this platform")
}
